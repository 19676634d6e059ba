import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { bareColumn, columnsOf, compiledStatement, orNull, rowsAs, selectAs, type Db, type RawBigint } from "../db/client";
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
    const pairs = rowsAs(pairColumns, await takeEvents(tx, { batch }));
    if (!pairs.length) return { events: 0, deliveries: [] };
    const seqs = [...new Set(pairs.map((p) => Number(p.event_seq)))];
    const going = pairs.flatMap((p) =>
      p.subscription_id === null ? [] : [{ id: newId("whd"), subscription_id: p.subscription_id, event_id: p.event_id, event_seq: Number(p.event_seq) }],
    );
    const made = rowsAs(madeColumns, await saveDeliveries(tx, { deliveries: JSON.stringify(going), seqs: JSON.stringify(seqs) }));
    return { events: seqs.length, deliveries: made.map((d) => ({ id: d.id, subscriptionId: d.subscription_id, version: String(d.version) })) };
  });
}

const takenColumns = { seq: events.seq };
/** An event taken and a subscription it goes to (a LEFT JOIN: none for an event that goes nowhere). */
const pairColumns = { event_seq: columnsOf("t", takenColumns).seq, event_id: e.id, ...orNull({ subscription_id: s.id }) };

/**
 * Takes up to `batch` events not yet fanned out, oldest first, locked (`SKIP LOCKED`), each with
 * every subscription it goes to (one row per pair; a row with no subscription for an event
 * that goes nowhere).
 */
const takeEvents = compiledStatement(
  "webhook_fan_out_take",
  () => sql`
    with taken as (
      select ${selectAs(takenColumns)} from ${events} where ${events.fannedOutAt} is null
      order by ${events.seq} limit ${sql.placeholder("batch")} for update skip locked)
    select ${selectAs(pairColumns)}
    from taken t
    join ${events} ${e} on ${e.seq} = t.seq
    left join ${webhookSubscriptions} ${s} on ${s.status} = 'active' and ${e.type} = any(${s.events})
      and ${reachesApp(e, s.clientId)}
    order by t.seq, ${s.id}`,
);

const ls = alias(webhookSubscriptions, "live_subscription");
const le = alias(events, "pair_event");
const lg = alias(oauthGrants, "live_grant");

const madeColumns = {
  id: webhookDeliveries.id,
  subscription_id: webhookDeliveries.subscriptionId,
  // Computed: updated_at in whole milliseconds.
  version: sql<RawBigint>`floor(extract(epoch from ${webhookDeliveries.updatedAt}) * 1000)::bigint`,
};

/**
 * The deliveries made (a pair already made is left as it is) and the events marked fanned out,
 * in one statement. What decided a pair can change before it commits: a 20th failure or an edit
 * disables the subscription and fails its pending deliveries, a disconnect revokes the grant and
 * withdraws the app's (lib/webhooks/withdraw.ts). So the subscriptions and the athletes' grants
 * the pairs name are share-locked here and read at their latest version (a row this statement
 * waited for is read again once the change holding it commits): a pair whose subscription is no
 * longer active, or whose athlete's grant was revoked, is not made, and a change that comes
 * after waits for this transaction and then sees the deliveries it made.
 */
export const saveDeliveries = compiledStatement(
  "webhook_fan_out_save",
  () => sql`
    with r as (
      select * from jsonb_to_recordset(${sql.placeholder("deliveries")}::jsonb) as r(id text, subscription_id text, event_id text, event_seq bigint)),
    live_subscriptions as (
      select ${ls.id}, ${ls.clientId} from ${webhookSubscriptions} ${ls}
      where ${ls.id} in (select subscription_id from r) and ${ls.status} = 'active'
      order by ${ls.id} for share),
    live_grants as (
      select ${lg.clientId}, ${lg.userId} from ${oauthGrants} ${lg}
      where (${lg.clientId}, ${lg.userId}) in (
          select ${ls.clientId}, ${le.athleteId} from r
          join ${webhookSubscriptions} ${ls} on ${ls.id} = r.subscription_id
          join ${events} ${le} on ${le.id} = r.event_id
          where ${le.clientId} is null)
        and ${lg.revokedAt} is null
      order by ${lg.id} for share),
    made as (
      insert into ${webhookDeliveries} (${bareColumn(webhookDeliveries.id)}, ${bareColumn(webhookDeliveries.subscriptionId)}, ${bareColumn(webhookDeliveries.eventId)}, ${bareColumn(webhookDeliveries.eventSeq)})
      select r.id, r.subscription_id, r.event_id, r.event_seq
      from r
      join live_subscriptions s on s.id = r.subscription_id
      join ${events} ${le} on ${le.id} = r.event_id
      -- An event addressed to one app (athlete.deauthorized) needs no grant: it follows the end of one.
      where ${le.clientId} is not null or exists (select 1 from live_grants g where g.client_id = s.client_id and g.user_id = ${le.athleteId})
      order by r.event_seq, r.subscription_id
      on conflict do nothing
      returning ${selectAs(madeColumns)}),
    marked as (
      update ${events} set ${bareColumn(events.fannedOutAt)} = now()
      -- As an array, so the primary key finds them however few the events (a semi-join to a
      -- list the planner takes for 100 rows read the whole outbox).
      where ${events.seq} = any(array(select (jsonb_array_elements_text(${sql.placeholder("seqs")}::jsonb))::bigint)))
    select id, subscription_id, version from made`,
);
