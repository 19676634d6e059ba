import { and, asc, eq, gt, sql, type SQL } from "drizzle-orm";
import { alias, type AnyPgColumn } from "drizzle-orm/pg-core";
import { rowsOf, type Db } from "../db/client";
import { events, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { CLAIM_LEASE_S } from "./claim-lease";

/** A delivery held by one worker until `lockedUntil`, with what it needs to be sent. */
export type ClaimedDelivery = {
  id: string;
  subscriptionId: string;
  /** Attempts made before this one. */
  attemptCount: number;
  /**
   * Claimed as its failing subscription's one probe. A delivery claimed while the subscription
   * was healthy that fails after the streak began (it was in flight beside the first failure)
   * is logged but not counted: the streak counts the probes, one at a time (CONTRACT §7).
   */
  probe: boolean;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
  event: { id: string; type: string; athleteId: string; objectId: string; objectType: string; occurredAt: Date } | null;
};

/**
 * Deliveries of one healthy subscription in flight at once (claimed and not yet recorded). An
 * endpoint that hangs for the whole 10 s timeout holds at most this many of a worker's slots,
 * and leaves the rest to other subscriptions; from its first failure it is down to one probe.
 */
export const MAX_IN_FLIGHT_PER_SUBSCRIPTION = 4;

/**
 * A database instant (microseconds) as the first millisecond not before it: a wake-up set
 * for a truncated instant would come a fraction early and find nothing due.
 */
export function notBefore(v: string | Date): Date {
  return new Date(new Date(v).getTime() + 1);
}

// Typed SQL: every column below comes from the schema, through these aliases.
const d = alias(webhookDeliveries, "d");
const x = alias(webhookDeliveries, "x");
const s = alias(webhookSubscriptions, "s");
const e = alias(events, "e");
/** A column as the target of an UPDATE's SET, which takes no table name. */
const target = (c: AnyPgColumn) => sql.identifier(c.name);

/** Pending, due, and held by no live worker (never claimed, recorded since, or its lease lapsed). */
const claimable = sql`${d.status} = 'pending' and ${d.nextAttemptAt} <= now() and (${d.lockedUntil} is null or ${d.lockedUntil} <= now())`;
/** Deliveries of subscription `sub` in flight now: claimed, with a lease still running. */
const inFlightOf = (sub: AnyPgColumn) =>
  sql`select 1 from ${webhookDeliveries} ${x} where ${x.subscriptionId} = ${sub} and ${x.status} = 'pending' and ${x.lockedUntil} > now()`;

/**
 * Claims up to `limit` due deliveries for this worker, setting `locked_until` (a lease of
 * `leaseS`, which the worker renews while it attempts them: claim-lease.ts) in the claiming
 * statement, so a dead worker's claims lapse within the lease and are taken again.
 *
 * A healthy subscription gets at most MAX_IN_FLIGHT_PER_SUBSCRIPTION deliveries in flight,
 * counting those claimed before, oldest events first. A subscription that is failing
 * (`consecutive_failures > 0`) is probed by one delivery at a time, its oldest pending one,
 * when that is due and nothing else of it is in flight (CONTRACT §7): newer deliveries wait
 * behind it, so an outage costs one failure per retry step, not one per queued event. Its row
 * is locked while claiming, so two workers never probe it at once.
 */
export async function claimDueDeliveries(db: Db, opts: { limit: number; leaseS?: number }): Promise<ClaimedDelivery[]> {
  if (opts.limit <= 0) return [];
  const leaseS = opts.leaseS ?? CLAIM_LEASE_S;
  // One statement, atomic by itself: SKIP LOCKED keeps two workers off the same rows, and a
  // row changed by a worker that committed meanwhile is re-checked against the conditions
  // before it is taken (READ COMMITTED's re-evaluation of updated rows). The room a
  // subscription has is read from the statement's snapshot: one worker's claims come one
  // after another, so it never exceeds the cap; two workers claiming in the same instant could
  // each fill the room once. Healthy subscriptions' deliveries first; the room left goes to
  // probes of failing ones.
  return claimedRows(
    await db.execute(sql`
      with room as (
        select ${s.id} as id, ${MAX_IN_FLIGHT_PER_SUBSCRIPTION} - (select count(*) from (${inFlightOf(s.id)}) f)::int as free
        from ${webhookSubscriptions} ${s}
        where ${s.status} = 'active' and ${s.consecutiveFailures} = 0),
      healthy as (
        select h.id from room r
        cross join lateral (
          select ${d.id} as id, ${d.nextAttemptAt} as next_attempt_at, ${d.eventSeq} as event_seq
          from ${webhookDeliveries} ${d}
          where ${d.subscriptionId} = r.id and ${claimable}
          order by ${d.eventSeq}
          limit greatest(r.free, 0)
          for update of ${d} skip locked) h
        order by h.next_attempt_at, h.event_seq
        limit ${opts.limit}),
      heads as (
        select h.id from ${webhookSubscriptions} ${s}
        cross join lateral (
          select ${d.id} as id, ${d.nextAttemptAt} as next_attempt_at from ${webhookDeliveries} ${d}
          where ${d.subscriptionId} = ${s.id} and ${d.status} = 'pending'
          order by ${d.eventSeq} limit 1) h
        where ${s.status} = 'active' and ${s.consecutiveFailures} > 0 and h.next_attempt_at <= now()
          and not exists (${inFlightOf(s.id)})
        limit greatest(${opts.limit} - (select count(*) from healthy), 0)
        for update of ${s} skip locked),
      claimed as (
        update ${webhookDeliveries} ${d}
        set ${target(webhookDeliveries.lockedUntil)} = now() + make_interval(secs => ${leaseS}), ${target(webhookDeliveries.updatedAt)} = now()
        where ${d.id} in (select id from healthy union all select id from heads) and ${claimable}
        returning ${d.id} as id)
      ${loadClaimed}`),
  );
}

export type ClaimOne =
  | { state: "claimed"; delivery: ClaimedDelivery }
  /** Not yet: due later, in flight elsewhere, or waiting for its failing subscription's probe. */
  | { state: "wait"; until: Date | null }
  /** Nothing left to do: succeeded, failed, disabled, or gone. */
  | { state: "done"; status: "succeeded" | "failed" | "gone" };

/**
 * Claims one named delivery (the Inngest runner's unit of work) under the same rules as
 * `claimDueDeliveries`. `wait` with `until: null` means it waits behind its failing
 * subscription's probe and is dispatched again when the subscription recovers. The delivery
 * and its subscription are locked first, so claims of one subscription take turns and each
 * counts what the ones before it claimed.
 */
export async function claimDelivery(db: Db, deliveryId: string, opts: { leaseS?: number } = {}): Promise<ClaimOne> {
  const leaseS = opts.leaseS ?? CLAIM_LEASE_S;
  const result = await db.transaction(async (tx): Promise<ClaimOne | { state: "ok"; probe: boolean }> => {
    const [row] = await tx
      .select({
        status: webhookDeliveries.status,
        subscriptionId: webhookDeliveries.subscriptionId,
        due: sql<boolean>`${webhookDeliveries.nextAttemptAt} <= now()`,
        nextAttemptAt: webhookDeliveries.nextAttemptAt,
        locked: sql<boolean>`coalesce(${webhookDeliveries.lockedUntil} > now(), false)`,
        lockedUntil: webhookDeliveries.lockedUntil,
        subStatus: webhookSubscriptions.status,
        consecutiveFailures: webhookSubscriptions.consecutiveFailures,
      })
      .from(webhookDeliveries)
      .innerJoin(webhookSubscriptions, eq(webhookSubscriptions.id, webhookDeliveries.subscriptionId))
      .where(eq(webhookDeliveries.id, deliveryId))
      .for("update");
    if (!row) return { state: "done", status: "gone" };
    if (row.status !== "pending") return { state: "done", status: row.status };
    if (row.subStatus !== "active") return { state: "done", status: "failed" };
    if (!row.due) return { state: "wait", until: notBefore(row.nextAttemptAt) };
    if (row.locked) return { state: "wait", until: notBefore(row.lockedUntil!) };
    const failing = row.consecutiveFailures > 0;
    // In flight now, soonest lease end first: a failing subscription allows none beside its
    // probe, a healthy one MAX_IN_FLIGHT_PER_SUBSCRIPTION.
    const inFlight = await tx
      .select({ lockedUntil: webhookDeliveries.lockedUntil })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.subscriptionId, row.subscriptionId),
          eq(webhookDeliveries.status, "pending"),
          gt(webhookDeliveries.lockedUntil, sql`now()`),
        ),
      )
      .orderBy(asc(webhookDeliveries.lockedUntil))
      .limit(MAX_IN_FLIGHT_PER_SUBSCRIPTION);
    if (inFlight.length >= (failing ? 1 : MAX_IN_FLIGHT_PER_SUBSCRIPTION)) return { state: "wait", until: notBefore(inFlight[0]!.lockedUntil!) };
    if (failing) {
      const [head] = await tx
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.subscriptionId, row.subscriptionId), eq(webhookDeliveries.status, "pending")))
        .orderBy(asc(webhookDeliveries.eventSeq))
        .limit(1);
      if (head?.id !== deliveryId) return { state: "wait", until: null };
    }
    await tx
      .update(webhookDeliveries)
      .set({ lockedUntil: sql`now() + make_interval(secs => ${leaseS})`, updatedAt: sql`now()` })
      .where(eq(webhookDeliveries.id, deliveryId));
    return { state: "ok", probe: failing };
  });
  if (result.state !== "ok") return result;
  const [delivery] = claimedRows(
    await db.execute(sql`
      with claimed as (select ${deliveryId}::text as id)
      ${loadClaimed}`),
  );
  return delivery ? { state: "claimed", delivery: { ...delivery, probe: result.probe } } : { state: "done", status: "gone" };
}

/** A delivery to hand to a worker; `version` changes whenever the row does (its updated_at). */
export type DueDelivery = { id: string; subscriptionId: string; version: string };

/**
 * Deliveries due for an attempt that no worker holds, under the same one-probe rule for
 * failing subscriptions: what a sweeper hands out again after a crash, an outage or a
 * redelivery. `overdueS` leaves alone those a sleeping worker is about to take. (Handing out
 * more of a subscription than its cap is harmless: the claim makes the rest wait.)
 */
export async function listDueDeliveries(
  db: Db,
  opts: { limit: number; overdueS?: number; subscriptionId?: string },
): Promise<DueDelivery[]> {
  const overdue = opts.overdueS ?? 0;
  const onlySub = opts.subscriptionId ? sql`and ${s.id} = ${opts.subscriptionId}` : sql``;
  const version = (c: AnyPgColumn | SQL) => sql`floor(extract(epoch from ${c}) * 1000)::bigint`;
  const rows = rowsOf<{ id: string; subscription_id: string; version: string | number }>(
    await db.execute(sql`
      (select ${d.id} as id, ${d.subscriptionId} as subscription_id, ${version(d.updatedAt)} as version
        from ${webhookDeliveries} ${d}
        join ${webhookSubscriptions} ${s} on ${s.id} = ${d.subscriptionId}
        where ${d.status} = 'pending' and ${d.nextAttemptAt} <= now() - make_interval(secs => ${overdue})
          and (${d.lockedUntil} is null or ${d.lockedUntil} <= now())
          and ${s.status} = 'active' and ${s.consecutiveFailures} = 0 ${onlySub}
        order by ${d.nextAttemptAt} limit ${opts.limit})
      union all
      (select h.id, ${s.id}, ${version(sql`h.updated_at`)} from ${webhookSubscriptions} ${s}
        cross join lateral (
          select ${d.id} as id, ${d.nextAttemptAt} as next_attempt_at, ${d.updatedAt} as updated_at from ${webhookDeliveries} ${d}
          where ${d.subscriptionId} = ${s.id} and ${d.status} = 'pending'
          order by ${d.eventSeq} limit 1) h
        where ${s.status} = 'active' and ${s.consecutiveFailures} > 0 ${onlySub}
          and h.next_attempt_at <= now() - make_interval(secs => ${overdue})
          and not exists (${inFlightOf(s.id)})
        limit ${opts.limit})`),
  );
  return rows.slice(0, opts.limit).map((r) => ({ id: r.id, subscriptionId: r.subscription_id, version: String(r.version) }));
}

/** Follows a `claimed (id)` CTE: what an attempt needs, oldest event first. */
const loadClaimed = sql`
  select ${d.id} as id, ${d.subscriptionId} as subscription_id, ${d.attemptCount} as attempt_count,
    ${s.consecutiveFailures} > 0 as probe, ${s.url} as url, ${s.secretSealed} as secret_sealed,
    ${s.previousSecretSealed} as previous_secret_sealed, ${s.previousSecretExpiresAt} as previous_secret_expires_at,
    ${e.id} as event_id, ${e.type} as type, ${e.athleteId} as athlete_id, ${e.objectId} as object_id,
    ${e.objectType} as object_type, ${e.occurredAt} as occurred_at
  from claimed c
  join ${webhookDeliveries} ${d} on ${d.id} = c.id
  join ${webhookSubscriptions} ${s} on ${s.id} = ${d.subscriptionId}
  left join ${events} ${e} on ${e.id} = ${d.eventId}
  order by ${d.eventSeq}`;

function claimedRows(result: unknown): ClaimedDelivery[] {
  type Row = {
    id: string;
    subscription_id: string;
    attempt_count: number;
    probe: boolean;
    url: string;
    secret_sealed: string;
    previous_secret_sealed: string | null;
    previous_secret_expires_at: string | Date | null;
    event_id: string | null;
    type: string | null;
    athlete_id: string | null;
    object_id: string | null;
    object_type: string | null;
    occurred_at: string | Date | null;
  };
  return rowsOf<Row>(result).map((r) => ({
    id: r.id,
    subscriptionId: r.subscription_id,
    attemptCount: Number(r.attempt_count),
    probe: r.probe,
    url: r.url,
    secretSealed: r.secret_sealed,
    previousSecretSealed: r.previous_secret_sealed,
    previousSecretExpiresAt: r.previous_secret_expires_at ? new Date(r.previous_secret_expires_at) : null,
    event:
      r.event_id === null
        ? null // its event row is gone: the attempt is recorded as not sent
        : { id: r.event_id, type: r.type!, athleteId: r.athlete_id!, objectId: r.object_id!, objectType: r.object_type!, occurredAt: new Date(r.occurred_at!) },
  }));
}
