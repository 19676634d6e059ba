import "server-only";
import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "../db/client";

const WINDOW_S = 15 * 60;
export const MAX_FAILED_SIGNINS = 10;

function windowStart(nowMs: number): string {
  return new Date(Math.floor(nowMs / (WINDOW_S * 1000)) * WINDOW_S * 1000).toISOString();
}

/**
 * CONTRACT §10: an email is refused for 15 minutes after 10 failed sign-ins on it within
 * 15 minutes. Counted in the database so every instance agrees. Returns seconds to wait, or 0.
 */
export async function signInLockout(db: Db, email: string, nowMs = Date.now()): Promise<number> {
  const r = await db.execute(sql`
    select window_start, count from rate_limit_counters
    where bucket = ${`signin-fail:${email}`} and window_start >= ${new Date(nowMs - WINDOW_S * 1000).toISOString()}
    order by window_start desc limit 1`);
  const row = rowsOf<{ window_start: string | Date; count: number }>(r)[0];
  if (!row || Number(row.count) < MAX_FAILED_SIGNINS) return 0;
  const until = new Date(row.window_start).getTime() + 2 * WINDOW_S * 1000;
  return Math.max(1, Math.ceil((until - nowMs) / 1000));
}

export async function recordFailedSignIn(db: Db, email: string, nowMs = Date.now()): Promise<void> {
  await db.execute(sql`
    insert into rate_limit_counters (bucket, window_start, count)
    values (${`signin-fail:${email}`}, ${windowStart(nowMs)}, 1)
    on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1`);
}
