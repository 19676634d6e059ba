import "server-only";
import { and, asc, eq, gte, lte, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { bareColumn, rowsOf, type Db } from "../db/client";
import { rateLimitCounters } from "../db/schema";

/** The span CONTRACT §10 counts failures over, and refuses for. */
const SPAN_MS = 15 * 60 * 1000;
/** Failures are counted in slices this long: a refusal ends at most this much after 15 minutes. */
export const SLICE_MS = 10 * 1000;
export const MAX_FAILED_SIGNINS = 10;

// The `:15m` suffix lets the hourly counter pruning drop these slices after a day.
function bucketOf(email: string): string {
  return `signin:${email}:15m`;
}

function sliceStart(nowMs: number): Date {
  return new Date(Math.floor(nowMs / SLICE_MS) * SLICE_MS);
}

/** An attempt that holds one of an email's ten places until it succeeds (and gives it back) or fails (and keeps it). */
export type SignInReservation = { bucket: string; windowStart: Date };

export type SignInReservationResult = { ok: true; reservation: SignInReservation } | { ok: false; retryAfterS: number };

/**
 * CONTRACT §10: an email is refused for 15 minutes after 10 failed sign-ins on it within
 * 15 minutes. The count lives in the database (every instance agrees), in slices of 10 s, and
 * counts attempts *before* their password is verified: one statement takes a place if fewer
 * than ten are taken in the slices of the last 15 minutes (this one included) and the email is
 * not refused, so however many guesses arrive at once, no 15 minutes see more than ten
 * passwords verified. A success gives its place back (`releaseSignInAttempt`); a failure keeps
 * it. The refusal is a lock, not a sliding window: it lasts 15 minutes (to the end of a slice)
 * from the slice in which ten failures within 15 minutes were reached, however long before it
 * the first of them came. The lock is read from the same slices, so nothing else is written.
 */
export async function reserveSignInAttempt(db: Db, email: string, nowMs = Date.now()): Promise<SignInReservationResult> {
  const bucket = bucketOf(email);
  const current = sliceStart(nowMs);
  const from = new Date(current.getTime() - SPAN_MS);
  // The lock looks back twice the span: a slice of the last 15 minutes counts the 15 before it.
  const lookback = new Date(from.getTime() - SPAN_MS);
  const c = rateLimitCounters;
  const p = alias(rateLimitCounters, "earlier_slices");
  // The slices before this one that still count (a failure counts while its slice began at most 15 minutes before this one's start).
  const earlier = sql`coalesce((select sum(${p.count}) from ${c} ${p} where ${p.bucket} = ${bucket} and ${p.windowStart} >= ${from.toISOString()}::timestamptz and ${p.windowStart} < ${current.toISOString()}::timestamptz), 0)`;
  // Whether an earlier slice of the last 15 minutes reached ten with the slices of the 15 minutes up to it: the email is locked.
  const w = alias(rateLimitCounters, "lock_slices");
  const lockedBefore = sql`exists (select 1 from (
      select ${w.windowStart} as at, sum(${w.count}) over (order by ${w.windowStart} range between ${sql.raw(`interval '${SPAN_MS / 1000} seconds'`)} preceding and current row) as n
      from ${c} ${w} where ${w.bucket} = ${bucket} and ${w.windowStart} >= ${lookback.toISOString()}::timestamptz and ${w.windowStart} < ${current.toISOString()}::timestamptz
    ) runs where runs.at >= ${from.toISOString()}::timestamptz and runs.n >= ${MAX_FAILED_SIGNINS})`;
  const taken = await db.execute(sql`
    insert into ${c} (${bareColumn(c.bucket)}, ${bareColumn(c.windowStart)}, ${bareColumn(c.count)})
    select ${bucket}, ${current.toISOString()}::timestamptz, 1
    where ${earlier} < ${MAX_FAILED_SIGNINS} and not ${lockedBefore}
    on conflict (${bareColumn(c.bucket)}, ${bareColumn(c.windowStart)})
      do update set ${bareColumn(c.count)} = ${c.count} + 1 where ${c.count} + ${earlier} < ${MAX_FAILED_SIGNINS} and not ${lockedBefore}
    returning ${c.count}`);
  if (rowsOf(taken).length > 0) return { ok: true, reservation: { bucket, windowStart: current } };

  // Refused: free again 15 minutes after the last slice that reached ten (to the end of the slice after it).
  const slices = await db
    .select({ at: c.windowStart, count: c.count })
    .from(c)
    .where(and(eq(c.bucket, bucket), gte(c.windowStart, lookback), lte(c.windowStart, current)))
    .orderBy(asc(c.windowStart));
  const lockedAt = lastSliceReachingTen(slices);
  const freeAt = lockedAt === undefined ? nowMs + SLICE_MS : lockedAt + SPAN_MS + SLICE_MS;
  return { ok: false, retryAfterS: Math.max(1, Math.ceil((freeAt - nowMs) / 1000)) };
}

/** The start of the last slice whose 15 minutes (it and the slices that began at most 15 minutes before it) hold ten places, as the statement above judges. */
function lastSliceReachingTen(slices: { at: Date; count: number }[]): number | undefined {
  let last: number | undefined;
  let inSpan = 0;
  for (let i = 0, first = 0; i < slices.length; i++) {
    const at = slices[i]!.at.getTime();
    inSpan += slices[i]!.count;
    for (; slices[first]!.at.getTime() < at - SPAN_MS; first++) inSpan -= slices[first]!.count;
    if (inSpan >= MAX_FAILED_SIGNINS) last = at;
  }
  return last;
}

/** A successful sign-in gives its place back: successes do not count (CONTRACT §10). */
export async function releaseSignInAttempt(db: Db, reservation: SignInReservation): Promise<void> {
  const c = rateLimitCounters;
  await db
    .update(c)
    .set({ count: sql`${c.count} - 1` })
    .where(and(eq(c.bucket, reservation.bucket), eq(c.windowStart, reservation.windowStart), sql`${c.count} > 0`));
}
