import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "../db/client";

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

/** How long a claim holds a delivery: longer than a send can take (10 s timeout). */
export const DEFAULT_LOCK_S = 30;

/**
 * A database instant (microseconds) as the first millisecond not before it: a wake-up set
 * for a truncated instant would come a fraction early and find nothing due.
 */
export function notBefore(v: string | Date): Date {
  return new Date(new Date(v).getTime() + 1);
}

/**
 * Claims up to `limit` due deliveries for this worker, setting `locked_until` in the claiming
 * transaction, so a crashed worker's claims simply lapse and are taken again.
 *
 * Deliveries to healthy subscriptions are claimed in parallel. A subscription that is failing
 * (`consecutive_failures > 0`) is probed by one delivery at a time, its oldest pending one,
 * when that is due and nothing else of it is in flight (CONTRACT §7): newer deliveries wait
 * behind it, so an outage costs one failure per retry step, not one per queued event. Its row
 * is locked while claiming, so two workers never probe it at once.
 */
export async function claimDueDeliveries(db: Db, opts: { limit: number; lockS?: number }): Promise<ClaimedDelivery[]> {
  if (opts.limit <= 0) return [];
  const lockS = opts.lockS ?? DEFAULT_LOCK_S;
  // One statement, atomic by itself: SKIP LOCKED keeps two workers off the same rows, and a
  // row changed by a worker that committed meanwhile is re-checked against the conditions
  // before it is taken (READ COMMITTED's re-evaluation of updated rows). Healthy
  // subscriptions' deliveries first; the room left goes to probes of failing ones.
  return claimedRows(
    await db.execute(sql`
      with healthy as (
        select d.id from webhook_deliveries d
        join webhook_subscriptions s on s.id = d.subscription_id
        where d.status = 'pending' and d.next_attempt_at <= now()
          and (d.locked_until is null or d.locked_until <= now())
          and s.status = 'active' and s.consecutive_failures = 0
        order by d.next_attempt_at, d.event_seq
        limit ${opts.limit}
        for update of d skip locked),
      heads as (
        select h.id from webhook_subscriptions s
        cross join lateral (
          select d.id, d.next_attempt_at from webhook_deliveries d
          where d.subscription_id = s.id and d.status = 'pending'
          order by d.event_seq limit 1) h
        where s.status = 'active' and s.consecutive_failures > 0 and h.next_attempt_at <= now()
          and not exists (
            select 1 from webhook_deliveries x
            where x.subscription_id = s.id and x.status = 'pending' and x.locked_until > now())
        limit greatest(${opts.limit} - (select count(*) from healthy), 0)
        for update of s skip locked),
      claimed as (
        update webhook_deliveries d set locked_until = now() + make_interval(secs => ${lockS}), updated_at = now()
        where d.id in (select id from healthy union all select id from heads)
          and d.status = 'pending' and d.next_attempt_at <= now() and (d.locked_until is null or d.locked_until <= now())
        returning d.id)
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
 * subscription's probe and is dispatched again when the subscription recovers.
 */
export async function claimDelivery(db: Db, deliveryId: string, opts: { lockS?: number } = {}): Promise<ClaimOne> {
  const lockS = opts.lockS ?? DEFAULT_LOCK_S;
  const result = await db.transaction(async (tx): Promise<ClaimOne | { state: "ok"; probe: boolean }> => {
    const [row] = rowsOf<{
      status: "pending" | "succeeded" | "failed";
      subscription_id: string;
      due: boolean;
      next_attempt_at: string | Date;
      locked: boolean;
      locked_until: string | Date | null;
      sub_status: "active" | "disabled";
      consecutive_failures: number;
    }>(
      await tx.execute(sql`
        select d.status, d.subscription_id, d.next_attempt_at <= now() as due, d.next_attempt_at,
          coalesce(d.locked_until > now(), false) as locked, d.locked_until,
          s.status as sub_status, s.consecutive_failures
        from webhook_deliveries d join webhook_subscriptions s on s.id = d.subscription_id
        where d.id = ${deliveryId}
        for update of d, s`),
    );
    if (!row) return { state: "done", status: "gone" };
    if (row.status !== "pending") return { state: "done", status: row.status };
    if (row.sub_status !== "active") return { state: "done", status: "failed" };
    if (!row.due) return { state: "wait", until: notBefore(row.next_attempt_at) };
    if (row.locked) return { state: "wait", until: notBefore(row.locked_until!) };
    if (row.consecutive_failures > 0) {
      const [inFlight] = rowsOf<{ locked_until: string | Date }>(
        await tx.execute(sql`
          select locked_until from webhook_deliveries
          where subscription_id = ${row.subscription_id} and status = 'pending' and locked_until > now()
          order by locked_until limit 1`),
      );
      if (inFlight) return { state: "wait", until: notBefore(inFlight.locked_until) };
      const [head] = rowsOf<{ id: string }>(
        await tx.execute(sql`
          select id from webhook_deliveries where subscription_id = ${row.subscription_id} and status = 'pending'
          order by event_seq limit 1`),
      );
      if (head?.id !== deliveryId) return { state: "wait", until: null };
    }
    await tx.execute(sql`
      update webhook_deliveries set locked_until = now() + make_interval(secs => ${lockS}), updated_at = now()
      where id = ${deliveryId}`);
    return { state: "ok", probe: row.consecutive_failures > 0 };
  });
  if (result.state !== "ok") return result;
  const [delivery] = claimedRows(
    await db.execute(sql`
      with claimed as (select id from webhook_deliveries where id = ${deliveryId})
      ${loadClaimed}`),
  );
  return delivery ? { state: "claimed", delivery: { ...delivery, probe: result.probe } } : { state: "done", status: "gone" };
}

/** A delivery to hand to a worker; `version` changes whenever the row does (its updated_at). */
export type DueDelivery = { id: string; subscriptionId: string; version: string };

/**
 * Deliveries due for an attempt that no worker holds, under the same one-probe rule for
 * failing subscriptions: what a sweeper hands out again after a crash, an outage or a
 * redelivery. `overdueS` leaves alone those a sleeping worker is about to take.
 */
export async function listDueDeliveries(
  db: Db,
  opts: { limit: number; overdueS?: number; subscriptionId?: string },
): Promise<DueDelivery[]> {
  const overdue = opts.overdueS ?? 0;
  const onlySub = opts.subscriptionId ? sql`and s.id = ${opts.subscriptionId}` : sql``;
  const rows = rowsOf<{ id: string; subscription_id: string; version: string | number }>(
    await db.execute(sql`
      (select d.id, d.subscription_id, floor(extract(epoch from d.updated_at) * 1000)::bigint as version
        from webhook_deliveries d
        join webhook_subscriptions s on s.id = d.subscription_id
        where d.status = 'pending' and d.next_attempt_at <= now() - make_interval(secs => ${overdue})
          and (d.locked_until is null or d.locked_until <= now())
          and s.status = 'active' and s.consecutive_failures = 0 ${onlySub}
        order by d.next_attempt_at limit ${opts.limit})
      union all
      (select h.id, s.id, floor(extract(epoch from h.updated_at) * 1000)::bigint from webhook_subscriptions s
        cross join lateral (
          select d.id, d.next_attempt_at, d.updated_at from webhook_deliveries d
          where d.subscription_id = s.id and d.status = 'pending'
          order by d.event_seq limit 1) h
        where s.status = 'active' and s.consecutive_failures > 0 ${onlySub}
          and h.next_attempt_at <= now() - make_interval(secs => ${overdue})
          and not exists (
            select 1 from webhook_deliveries x
            where x.subscription_id = s.id and x.status = 'pending' and x.locked_until > now())
        limit ${opts.limit})`),
  );
  return rows.slice(0, opts.limit).map((r) => ({ id: r.id, subscriptionId: r.subscription_id, version: String(r.version) }));
}

/** Follows a `claimed (id)` CTE: what an attempt needs, oldest event first. */
const loadClaimed = sql`
  select d.id, d.subscription_id, d.attempt_count, s.consecutive_failures > 0 as probe, s.url, s.secret_sealed, s.previous_secret_sealed,
    s.previous_secret_expires_at, e.id as event_id, e.type, e.athlete_id, e.object_id, e.object_type, e.occurred_at
  from claimed c
  join webhook_deliveries d on d.id = c.id
  join webhook_subscriptions s on s.id = d.subscription_id
  left join events e on e.id = d.event_id
  order by d.event_seq`;

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
