import "server-only";
import { and, eq, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { bareColumn, rowsOf, type Db } from "../db/client";
import { rateLimitCounters } from "../db/schema";

const WINDOW_MS = 15 * 60 * 1000;
export const MAX_FAILED_SIGNINS = 10;

// The `:15m` suffix lets the hourly counter pruning drop these windows after a day.
function bucketOf(email: string): string {
  return `signin:${email}:15m`;
}

function windowStart(nowMs: number): Date {
  return new Date(Math.floor(nowMs / WINDOW_MS) * WINDOW_MS);
}

/** An attempt that holds one of an email's ten places until it succeeds (and gives it back) or fails (and keeps it). */
export type SignInReservation = { bucket: string; windowStart: Date };

export type SignInReservationResult = { ok: true; reservation: SignInReservation } | { ok: false; retryAfterS: number };

/**
 * CONTRACT §10: an email is refused for 15 minutes after 10 failed sign-ins on it within
 * 15 minutes. The count lives in the database (every instance agrees), per fixed 15-minute
 * window, and counts attempts *before* their password is verified: one statement takes a place
 * if fewer than ten are taken in this window and the previous one together, so however many
 * guesses arrive at once, and however they straddle the windows' edge, no 15 minutes see more
 * than ten passwords verified (a span of 15 minutes lies within two windows in a row). A
 * success gives its place back (`releaseSignInAttempt`); a failure keeps it.
 *
 * A full window refuses the rest of itself and the whole next window; one filled together with
 * the previous refuses until it ends, when the previous one's count drops out.
 */
export async function reserveSignInAttempt(db: Db, email: string, nowMs = Date.now()): Promise<SignInReservationResult> {
  const bucket = bucketOf(email);
  const current = windowStart(nowMs);
  const previous = new Date(current.getTime() - WINDOW_MS);
  const c = rateLimitCounters;
  const p = alias(rateLimitCounters, "previous_window");
  const previousCount = sql`coalesce((select ${p.count} from ${c} ${p} where ${p.bucket} = ${bucket} and ${p.windowStart} = ${previous.toISOString()}::timestamptz), 0)`;
  const taken = await db.execute(sql`
    insert into ${c} (${bareColumn(c.bucket)}, ${bareColumn(c.windowStart)}, ${bareColumn(c.count)})
    select ${bucket}, ${current.toISOString()}::timestamptz, 1
    where ${previousCount} < ${MAX_FAILED_SIGNINS}
    on conflict (${bareColumn(c.bucket)}, ${bareColumn(c.windowStart)})
      do update set ${bareColumn(c.count)} = ${c.count} + 1 where ${c.count} + ${previousCount} < ${MAX_FAILED_SIGNINS}
    returning ${c.count}`);
  if (rowsOf(taken).length > 0) return { ok: true, reservation: { bucket, windowStart: current } };

  const [row] = await db
    .select({ count: c.count })
    .from(c)
    .where(and(eq(c.bucket, bucket), eq(c.windowStart, current)));
  const currentFull = (row?.count ?? 0) >= MAX_FAILED_SIGNINS;
  const until = current.getTime() + (currentFull ? 2 : 1) * WINDOW_MS;
  return { ok: false, retryAfterS: Math.max(1, Math.ceil((until - nowMs) / 1000)) };
}

/** A successful sign-in gives its place back: successes do not count (CONTRACT §10). */
export async function releaseSignInAttempt(db: Db, reservation: SignInReservation): Promise<void> {
  const c = rateLimitCounters;
  await db
    .update(c)
    .set({ count: sql`${c.count} - 1` })
    .where(and(eq(c.bucket, reservation.bucket), eq(c.windowStart, reservation.windowStart), sql`${c.count} > 0`));
}
