import { sql, type SQL } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { webhookDeliveries, webhookSubscriptions } from "../db/schema";

/**
 * The delivery policy (CONTRACT §7), written once: which deliveries may be claimed, how many of
 * a subscription may be in flight, the retry schedule, when a delivery fails for good and when
 * a subscription is disabled. Both runners (lib/webhooks/local-runner.ts and the Inngest
 * functions) claim through lib/webhooks/claim-deliveries.ts and record through
 * lib/webhooks/record-attempt.ts, which take every rule from here; the SQL forms below take
 * their columns from the schema, so a renamed column fails the typecheck.
 *
 * This module imports no database client (the console shows the thresholds).
 *
 * Lock order: a transaction that locks a subscription and some of its deliveries takes the
 * subscription first. The verbs do (update-subscription.ts locks it, then fails or requeues
 * its deliveries; a delete takes the row, then its deliveries go with it), and so does the
 * record of an attempt (record-attempt.ts). Taken the other way round, a record holding its
 * delivery and a developer's disable holding the subscription each wait for the other, and
 * PostgreSQL ends one of them ("deadlock detected"). The claim never waits on a row (SKIP
 * LOCKED), so it may take them in any order.
 */

/**
 * Deliveries of one healthy subscription in flight at once (claimed and not yet recorded). An
 * endpoint that hangs for the whole 10 s timeout holds at most this many of a worker's slots,
 * and leaves the rest to other subscriptions.
 */
export const MAX_IN_FLIGHT_PER_SUBSCRIPTION = 4;

/**
 * A failing subscription (any failure counted since its last success) is probed by one
 * delivery at a time, its oldest pending one: newer deliveries wait behind it, so an outage
 * costs one failure per retry step, not one per queued event.
 */
export function isFailing(consecutiveFailures: number): boolean {
  return consecutiveFailures > 0;
}

/** CONTRACT §7: the wait after failed attempt n (1-based), before ±20 % jitter (WEBHOOK_RETRY_SCHEDULE_S replaces it). */
export const DEFAULT_RETRY_SCHEDULE_S = [10, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800, 43_200];
/** A delivery fails for good after this many attempts. */
export const MAX_ATTEMPTS = 20;
/** A subscription is disabled at this many consecutive failures, and its pending deliveries fail. */
export const DISABLE_AFTER_FAILURES = 20;
/** The console calls a subscription failing from here on. */
export const FAILING_AFTER_FAILURES = 10;

/**
 * Seconds to wait after failed attempt `attempt`, or null when no attempt is left. Past the
 * schedule's end its last step repeats (every 12 hours). `random` is in [0, 1).
 */
export function retryDelayS(
  attempt: number,
  schedule: readonly number[] = DEFAULT_RETRY_SCHEDULE_S,
  random: () => number = Math.random,
): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  const base = schedule[Math.min(attempt, schedule.length) - 1] ?? schedule[schedule.length - 1] ?? 0;
  const jitter = 1 + (random() * 0.4 - 0.2);
  return Math.max(0, base * jitter);
}

/**
 * What a failed attempt leads to. The first failure starts the subscription's streak; after
 * that only the probe counts: deliveries that were in flight beside the first failure are
 * logged and retried, but do not each add to the streak. At DISABLE_AFTER_FAILURES the
 * subscription is disabled; otherwise the delivery is retried on the schedule, or fails after
 * its last attempt (`retryInS` null).
 *
 * A failure recorded for a delivery another attempt already delivered counts for nothing: a
 * worker paused past its lease (a VM paused, a process stopped) records its stale timeout after
 * the worker that took the delivery over was answered 2xx, and the endpoint that answered is
 * not failing.
 */
export function afterFailure(o: {
  /** This attempt's number since the delivery was last queued again by hand (or since it was made), 1-based. */
  attempt: number;
  /** The subscription before this attempt (null: deleted meanwhile). */
  subscription: { status: "active" | "disabled"; consecutiveFailures: number } | null;
  probe: boolean;
  /** Another attempt of this delivery succeeded meanwhile. */
  delivered?: boolean;
  schedule?: readonly number[];
  random?: () => number;
}): { countsTowardsStreak: boolean; streak: number; disable: boolean; retryInS: number | null } {
  const sub = o.subscription;
  const counts = !o.delivered && sub?.status === "active" && (!isFailing(sub.consecutiveFailures) || o.probe);
  const streak = (sub?.consecutiveFailures ?? 0) + (counts ? 1 : 0);
  return {
    countsTowardsStreak: counts,
    streak,
    disable: counts && streak >= DISABLE_AFTER_FAILURES,
    retryInS: retryDelayS(o.attempt, o.schedule, o.random),
  };
}

// The same rules as SQL, over the columns of the query that uses them (aliases of the schema's
// tables), for the claim and the sweep.
// The keys are the schema's property names, so renaming a column fails the typecheck here.
type Deliveries = Record<keyof typeof webhookDeliveries._.columns & ("status" | "nextAttemptAt" | "lockedUntil"), AnyPgColumn>;
type Subscriptions = Record<keyof typeof webhookSubscriptions._.columns & ("status" | "consecutiveFailures"), AnyPgColumn>;

/** Held by a worker now: claimed, with a lease still running. */
export function leased(d: Deliveries): SQL {
  return sql`${d.lockedUntil} > now()`;
}

/** Pending, due (at least `overdueS` ago) and held by no live worker (never claimed, recorded since, or its lease lapsed). */
export function claimable(d: Deliveries, overdueS = 0): SQL {
  const due = overdueS > 0 ? sql`${d.nextAttemptAt} <= now() - make_interval(secs => ${overdueS})` : sql`${d.nextAttemptAt} <= now()`;
  return sql`${d.status} = 'pending' and ${due} and (${d.lockedUntil} is null or ${d.lockedUntil} <= now())`;
}

/** The subscription takes deliveries at all. */
export function deliverable(s: Subscriptions): SQL {
  return sql`${s.status} = 'active'`;
}

/** `isFailing` as SQL. */
export function failing(s: Subscriptions): SQL {
  return sql`${s.consecutiveFailures} > 0`;
}
