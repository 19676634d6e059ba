import "server-only";
import { perDatabase, type Db } from "../db/client";
import { attemptDelivery, type DeliveryOptions } from "./attempt-delivery";
import { claimDelivery, waitingAfterSuccess } from "./claim-deliveries";
import { claimLease } from "./claim-lease";
import type { AttemptRecorded } from "./record-attempt";
import { deliveryTidier } from "./tidy";

/** This process's share of the vacuums the delivery path needs (tidy.ts), as in the local runner. */
const tidier = perDatabase(() => deliveryTidier());

export type DeliverOnceResult =
  | {
      state: "succeeded" | "failed" | "gone";
      subscriptionRecovered?: boolean;
      subscriptionDisabled?: boolean;
      /**
       * Succeeded, and deliveries of its subscription wait for a hand-out as of this version
       * (`waitingAfterSuccess`): those that waited behind its probe, once it recovered.
       */
      waitingAsOf?: number;
    }
  /** Try again at `at` (ISO): a retry, a claim held elsewhere, or a delivery not yet due. */
  | { state: "retry"; at: string }
  /** Waits behind its failing subscription's probe; dispatched again when that recovers. */
  | { state: "queued" };

/**
 * Claim one named delivery and, if the policy lets it go, attempt it: the Inngest runner's
 * step, the same claim, send and record the local runner uses. The result is plain JSON, as
 * step results are.
 */
export async function deliverOnce(db: Db, deliveryId: string, opts: DeliveryOptions & { leaseS?: number }): Promise<DeliverOnceResult> {
  const claim = await claimDelivery(db, deliveryId, { leaseS: opts.leaseS });
  // Succeeded already: perhaps by this very step's first run, whose result (a recovery among
  // it) never reached Inngest. What waits is read from the data again.
  if (claim.state === "done") return claim.status === "succeeded" ? { state: "succeeded", ...(await waiting(db, deliveryId)) } : { state: claim.status };
  if (claim.state === "wait") return claim.until ? { state: "retry", at: claim.until.toISOString() } : { state: "queued" };
  // The claim is renewed while the attempt runs; a step that dies with its process leaves it
  // to lapse within the lease, and Inngest's retry of the step claims it again.
  const lease = claimLease(async () => db, { leaseS: opts.leaseS });
  lease.hold(claim.delivery.id);
  let r: AttemptRecorded | null;
  try {
    r = await attemptDelivery(db, claim.delivery, opts);
  } finally {
    lease.stop();
  }
  void tidier(db).recorded(db);
  if (!r) return { state: "gone" };
  if (r.status === "pending") return { state: "retry", at: (r.nextAttemptAt ?? new Date()).toISOString() };
  const recovered = r.status === "succeeded" && r.subscriptionRecovered ? await waiting(db, deliveryId) : {};
  return { state: r.status, subscriptionRecovered: r.subscriptionRecovered, subscriptionDisabled: r.subscriptionDisabled, ...recovered };
}

async function waiting(db: Db, deliveryId: string): Promise<{ waitingAsOf?: number }> {
  const w = await waitingAfterSuccess(db, deliveryId);
  return w ? { waitingAsOf: w.asOf } : {};
}
