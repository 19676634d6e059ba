import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "../db/client";
import { webhookDeliveries } from "../db/schema";
import { newId } from "../ids";
import { EVENT_SCOPES } from "./event-scope";

export type FannedOutDelivery = { id: string; subscriptionId: string; version: string };

const requiredScope = sql.join(
  [sql`case e.type`, ...Object.entries(EVENT_SCOPES).map(([type, scope]) => sql`when ${type} then ${scope}`), sql`end`],
  sql` `,
);

/**
 * Turns a batch of outbox events, oldest first, into deliveries: one per subscription for
 * which, at this moment, SPEC §6.2's three conditions hold (the subscription is active and
 * covers the kind; the athlete's grant to its app is not revoked; the grant carries the scope
 * the event sits behind). An event addressed to one app (`client_id`, as `athlete.deauthorized`
 * is, CONTRACT §7) goes only to that app's subscriptions covering it: its grant is already gone.
 *
 * Deliveries and the `fanned_out_at` mark commit together; `SKIP LOCKED` lets several workers
 * fan out at once without taking the same events, and a crash before the commit leaves the
 * events to the next run.
 */
export async function fanOutEvents(db: Db, opts: { batch?: number } = {}): Promise<{ events: number; deliveries: FannedOutDelivery[] }> {
  const batch = opts.batch ?? 200;
  return db.transaction(async (tx) => {
    const taken = rowsOf<{ seq: string | number }>(
      await tx.execute(sql`
        select seq from events where fanned_out_at is null
        order by seq limit ${batch} for update skip locked`),
    ).map((r) => Number(r.seq));
    if (!taken.length) return { events: 0, deliveries: [] };

    const pairs = rowsOf<{ event_id: string; event_seq: string | number; subscription_id: string }>(
      await tx.execute(sql`
        select e.id as event_id, e.seq as event_seq, s.id as subscription_id
        from events e
        join webhook_subscriptions s on s.status = 'active' and e.type = any(s.events)
        where e.seq in ${taken}
          and case
            when e.client_id is not null then s.client_id = e.client_id
            else exists (
              select 1 from oauth_grants g
              where g.client_id = s.client_id and g.user_id = e.athlete_id and g.revoked_at is null
                and (${requiredScope}) = any(g.scopes))
          end
        order by e.seq, s.id`),
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
    await tx.execute(sql`update events set fanned_out_at = now() where seq in ${taken}`);
    return { events: taken.length, deliveries };
  });
}
