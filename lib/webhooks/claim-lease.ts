import { and, inArray, isNotNull, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { webhookDeliveries } from "../db/schema";
import { log } from "../log";

/**
 * How long a claim holds a delivery unless its worker renews it. A live worker renews the
 * claims of the attempts it has in flight every third of this, however long they take (a
 * delivery may take its 10 s timeout); a worker that dies (SIGKILL, a lost machine) stops
 * renewing, and its deliveries can be claimed again within this many seconds.
 */
export const CLAIM_LEASE_S = 5;

export type ClaimLease = {
  /** Renew this delivery's claim until `release`: call it as soon as it is claimed. */
  hold: (deliveryId: string) => void;
  /** Stop renewing it: call it once its attempt is recorded. */
  release: (deliveryId: string) => void;
  holds: (deliveryId: string) => boolean;
  /** Renew now (also done on a timer while anything is held). */
  renew: () => Promise<void>;
  stop: () => void;
};

/**
 * The renewals of one worker's claims: one statement for all it holds. Only a claim still in
 * place is extended (`locked_until` set, whatever the status: a delivery withdrawn or failed
 * while its attempt is out stays held until the attempt records), so a renewal that runs after
 * an attempt was recorded (which clears the claim) never puts a hold back. Should renewals stop
 * while the worker lives (the database unreachable longer than the lease), another worker may
 * send the delivery too: delivery stays at least once, never less.
 */
export function claimLease(db: () => Promise<Db>, opts: { leaseS?: number } = {}): ClaimLease {
  const leaseS = opts.leaseS ?? CLAIM_LEASE_S;
  const held = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let renewing: Promise<void> | undefined;

  const renew = async (): Promise<void> => {
    if (renewing) return renewing;
    if (!held.size) return;
    const ids = [...held];
    renewing = (async () => {
      try {
        await (await db())
          .update(webhookDeliveries)
          .set({ lockedUntil: sql`now() + make_interval(secs => ${leaseS})` })
          .where(and(inArray(webhookDeliveries.id, ids), isNotNull(webhookDeliveries.lockedUntil)));
      } catch (err) {
        log.warn("webhook claims not renewed; retrying", { deliveries: ids.length, error: String(err) });
      } finally {
        renewing = undefined;
      }
    })();
    return renewing;
  };

  return {
    hold(id) {
      held.add(id);
      if (timer) return;
      timer = setInterval(() => void renew(), (leaseS * 1000) / 3);
      timer.unref?.();
    },
    release(id) {
      held.delete(id);
      if (held.size || !timer) return;
      clearInterval(timer);
      timer = undefined;
    },
    holds: (id) => held.has(id),
    renew,
    stop() {
      clearInterval(timer);
      timer = undefined;
      held.clear();
    },
  };
}
