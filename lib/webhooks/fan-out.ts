import { inArray, isNull, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { rowsOf, type Db } from "../db/client";
import { events, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { newId } from "../ids";
import { entitledAt } from "./entitlement";

export type FannedOutDelivery = { id: string; subscriptionId: string; version: string };

const e = alias(events, "e");
const s = alias(webhookSubscriptions, "s");

/**
 * Turns a batch of outbox events, oldest first, into deliveries: one per subscription for
 * which SPEC §6.2's three conditions hold: the subscription is active and covers the kind (now),
 * and the athlete's grant to its app is active (now) and already existed, with the scope the
 * event sits behind, when the event occurred (`entitledAt`), so fan-out lag never lets an event
 * reach back before an authorization. An event addressed to one app (`client_id`, as
 * `athlete.deauthorized` is, CONTRACT §7) goes only to that app's subscriptions covering it: its
 * grant is already gone.
 *
 * Deliveries and the `fanned_out_at` mark commit together; `SKIP LOCKED` lets several workers
 * fan out at once without taking the same events, and a crash before the commit leaves the
 * events to the next run.
 */
export async function fanOutEvents(db: Db, opts: { batch?: number } = {}): Promise<{ events: number; deliveries: FannedOutDelivery[] }> {
  const batch = opts.batch ?? 200;
  return db.transaction(async (tx) => {
    const taken = (
      await tx.select({ seq: events.seq }).from(events).where(isNull(events.fannedOutAt)).orderBy(events.seq).limit(batch).for("update", { skipLocked: true })
    ).map((r) => r.seq);
    if (!taken.length) return { events: 0, deliveries: [] };

    const pairs = rowsOf<{ event_id: string; event_seq: string | number; subscription_id: string }>(
      await tx.execute(sql`
        select ${e.id} as event_id, ${e.seq} as event_seq, ${s.id} as subscription_id
        from ${events} ${e}
        join ${webhookSubscriptions} ${s} on ${s.status} = 'active' and ${e.type} = any(${s.events})
        where ${e.seq} in ${taken}
          and case
            when ${e.clientId} is not null then ${s.clientId} = ${e.clientId}
            else ${entitledAt({ clientId: s.clientId, athleteId: e.athleteId, type: e.type, occurredAt: e.occurredAt })}
          end
        order by ${e.seq}, ${s.id}`),
    );

    let deliveries: FannedOutDelivery[] = [];
    if (pairs.length) {
      const made = await tx
        .insert(webhookDeliveries)
        .values(pairs.map((p) => ({ id: newId("whd"), subscriptionId: p.subscription_id, eventId: p.event_id, eventSeq: Number(p.event_seq) })))
        .onConflictDoNothing()
        .returning({ id: webhookDeliveries.id, subscriptionId: webhookDeliveries.subscriptionId, updatedAt: webhookDeliveries.updatedAt });
      deliveries = made.map((d) => ({ id: d.id, subscriptionId: d.subscriptionId, version: String(d.updatedAt.getTime()) }));
    }
    await tx.update(events).set({ fannedOutAt: sql`now()` }).where(inArray(events.seq, taken));
    return { events: taken.length, deliveries };
  });
}
