import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { bareColumn, compiledStatement, rowsOf, type Db } from "../db/client";
import { events, oauthGrants, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { newId } from "../ids";
import { reachesApp } from "./entitlement";

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
    const pairs = rowsOf<{ event_seq: string | number; event_id: string; subscription_id: string | null }>(await takeEvents(tx, { batch }));
    if (!pairs.length) return { events: 0, deliveries: [] };
    const seqs = [...new Set(pairs.map((p) => Number(p.event_seq)))];
    const going = pairs.flatMap((p) =>
      p.subscription_id === null ? [] : [{ id: newId("whd"), subscription_id: p.subscription_id, event_id: p.event_id, event_seq: Number(p.event_seq) }],
    );
    const deliveries = JSON.stringify(going);
    // What decided these pairs can change before they commit: a 20th failure or an edit
    // disables a subscription and fails its pending deliveries, a disconnect withdraws the app's
    // (lib/webhooks/withdraw.ts). Each commits before this statement's locks are granted, or
    // waits for this transaction and then sees its deliveries; the save judges again after it.
    if (going.length) await lockDecidingRows(tx, { deliveries });
    const made = rowsOf<{ id: string; subscription_id: string; version: string | number }>(await saveDeliveries(tx, { deliveries, seqs: JSON.stringify(seqs) }));
    return { events: seqs.length, deliveries: made.map((d) => ({ id: d.id, subscriptionId: d.subscription_id, version: String(d.version) })) };
  });
}

/**
 * Takes up to `batch` events not yet fanned out, oldest first, locked (`SKIP LOCKED`), each with
 * every subscription it goes to (one row per pair; a row with no subscription for an event
 * that goes nowhere).
 */
const takeEvents = compiledStatement(
  "webhook_fan_out_take",
  () => sql`
    with taken as (
      select ${events.seq} as seq from ${events} where ${events.fannedOutAt} is null
      order by ${events.seq} limit ${sql.placeholder("batch")} for update skip locked)
    select t.seq as event_seq, ${e.id} as event_id, ${s.id} as subscription_id
    from taken t
    join ${events} ${e} on ${e.seq} = t.seq
    left join ${webhookSubscriptions} ${s} on ${s.status} = 'active' and ${e.type} = any(${s.events})
      and ${reachesApp(e, s.clientId)}
    order by t.seq, ${s.id}`,
);

const ls = alias(webhookSubscriptions, "locked_subscription");
const le = alias(events, "locked_event");
const lg = alias(oauthGrants, "locked_grant");

/**
 * Share-locks the subscriptions and the athletes' grants the pairs were judged by, in a fixed
 * order: a disable or a disconnect holding one commits first (this waits), or waits for this
 * transaction (and its next statement then sees the deliveries it made).
 */
const lockDecidingRows = compiledStatement(
  "webhook_fan_out_lock",
  () => sql`
    with p as (select * from jsonb_to_recordset(${sql.placeholder("deliveries")}::jsonb) as r(subscription_id text, event_id text)),
    subs as (
      select ${ls.id} from ${webhookSubscriptions} ${ls} where ${ls.id} in (select subscription_id from p) order by ${ls.id} for share),
    grants as (
      select ${lg.id} from ${oauthGrants} ${lg}
      where (${lg.clientId}, ${lg.userId}) in (
        select ${ls.clientId}, ${le.athleteId} from p
        join ${webhookSubscriptions} ${ls} on ${ls.id} = p.subscription_id
        join ${events} ${le} on ${le.id} = p.event_id
        where ${le.clientId} is null)
      order by ${lg.id} for share)
    select (select count(*) from subs) + (select count(*) from grants) as locked`,
);

/**
 * The deliveries made (a pair already made is left as it is) and the events marked fanned out,
 * in one statement. Each pair is judged again by fan-out's rule, now that the rows deciding it
 * are locked: one whose subscription was disabled or whose athlete disconnected the app since
 * the events were taken is not made.
 */
export const saveDeliveries = compiledStatement(
  "webhook_fan_out_save",
  () => sql`
    with made as (
      insert into ${webhookDeliveries} (${bareColumn(webhookDeliveries.id)}, ${bareColumn(webhookDeliveries.subscriptionId)}, ${bareColumn(webhookDeliveries.eventId)}, ${bareColumn(webhookDeliveries.eventSeq)})
      select r.id, r.subscription_id, r.event_id, r.event_seq
      from jsonb_to_recordset(${sql.placeholder("deliveries")}::jsonb) as r(id text, subscription_id text, event_id text, event_seq bigint)
      join ${webhookSubscriptions} ${ls} on ${ls.id} = r.subscription_id and ${ls.status} = 'active'
      join ${events} ${le} on ${le.id} = r.event_id
      where ${reachesApp(le, ls.clientId)}
      order by r.event_seq, r.subscription_id
      on conflict do nothing
      returning ${webhookDeliveries.id} as id, ${webhookDeliveries.subscriptionId} as subscription_id,
        floor(extract(epoch from ${webhookDeliveries.updatedAt}) * 1000)::bigint as version),
    marked as (
      update ${events} set ${bareColumn(events.fannedOutAt)} = now()
      -- As an array, so the primary key finds them however few the events (a semi-join to a
      -- list the planner takes for 100 rows read the whole outbox).
      where ${events.seq} = any(array(select (jsonb_array_elements_text(${sql.placeholder("seqs")}::jsonb))::bigint)))
    select id, subscription_id, version from made`,
);
