import "server-only";
import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "../db/client";
import { getEnv } from "../env";

export type RateWindow = {
  name: "15min" | "daily";
  limit: number;
  windowS: number;
  used: number;
  /** Seconds until this window resets. */
  resetS: number;
};

export type RateLimitResult = { windows: RateWindow[]; exceeded: RateWindow | undefined };

const WINDOWS = [
  { name: "15min", windowS: 15 * 60, suffix: "15m" },
  { name: "daily", windowS: 24 * 60 * 60, suffix: "1d" },
] as const;

function windowStart(nowMs: number, windowS: number): Date {
  return new Date(Math.floor(nowMs / (windowS * 1000)) * windowS * 1000);
}

/**
 * Counts one request against both fixed windows of `bucket` in one statement and tells
 * whether either is exceeded. The counters live in the database so every instance shares them.
 */
export async function consumeRateLimit(db: Db, bucket: string, nowMs = Date.now()): Promise<RateLimitResult> {
  const env = getEnv();
  const limits = { "15min": env.rateLimit15Min, daily: env.rateLimitDaily };
  const starts = WINDOWS.map((w) => windowStart(nowMs, w.windowS));
  const result = await db.execute(sql`
    insert into rate_limit_counters (bucket, window_start, count)
    values (${`${bucket}:${WINDOWS[0].suffix}`}, ${starts[0]!.toISOString()}, 1),
           (${`${bucket}:${WINDOWS[1].suffix}`}, ${starts[1]!.toISOString()}, 1)
    on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
    returning bucket, count`);
  const counts = new Map(rowsOf<{ bucket: string; count: number }>(result).map((r) => [r.bucket, Number(r.count)]));
  const windows = WINDOWS.map((w, i): RateWindow => {
    const end = starts[i]!.getTime() + w.windowS * 1000;
    return {
      name: w.name,
      limit: limits[w.name],
      windowS: w.windowS,
      used: counts.get(`${bucket}:${w.suffix}`) ?? 1,
      resetS: Math.max(1, Math.ceil((end - nowMs) / 1000)),
    };
  });
  return { windows, exceeded: windows.find((w) => w.used > w.limit) };
}

/**
 * The current windows of `bucket` as they stand, without counting a request (usage reports).
 * A window nobody has touched yet reads as unused.
 */
export async function peekRateLimit(db: Db, bucket: string, nowMs = Date.now()): Promise<RateWindow[]> {
  const env = getEnv();
  const limits = { "15min": env.rateLimit15Min, daily: env.rateLimitDaily };
  const starts = WINDOWS.map((w) => windowStart(nowMs, w.windowS));
  const result = await db.execute(sql`
    select bucket, count from rate_limit_counters
    where (bucket = ${`${bucket}:${WINDOWS[0].suffix}`} and window_start = ${starts[0]!.toISOString()})
       or (bucket = ${`${bucket}:${WINDOWS[1].suffix}`} and window_start = ${starts[1]!.toISOString()})`);
  const counts = new Map(rowsOf<{ bucket: string; count: number }>(result).map((r) => [r.bucket, Number(r.count)]));
  return WINDOWS.map((w, i) => ({
    name: w.name,
    limit: limits[w.name],
    windowS: w.windowS,
    used: counts.get(`${bucket}:${w.suffix}`) ?? 0,
    resetS: Math.max(1, Math.ceil((starts[i]!.getTime() + w.windowS * 1000 - nowMs) / 1000)),
  }));
}

/** The IETF httpapi rate-limit headers (draft-ietf-httpapi-ratelimit-headers). */
export function rateLimitHeaders(r: RateLimitResult): Record<string, string> {
  const headers: Record<string, string> = {
    "RateLimit-Policy": r.windows.map((w) => `"${w.name}";q=${w.limit};w=${w.windowS}`).join(", "),
    RateLimit: r.windows.map((w) => `"${w.name}";r=${Math.max(0, w.limit - w.used)};t=${w.resetS}`).join(", "),
  };
  if (r.exceeded) headers["Retry-After"] = String(r.exceeded.resetS);
  return headers;
}

/** Per-day counts of a bucket for the last `days` days (usage reports). */
export async function dailyCounts(db: Db, bucket: string, days: number, nowMs = Date.now()) {
  const since = windowStart(nowMs - (days - 1) * 86_400_000, 86_400);
  const result = await db.execute(sql`
    select window_start, count from rate_limit_counters
    where bucket = ${`${bucket}:1d`} and window_start >= ${since.toISOString()}
    order by window_start`);
  return rowsOf<{ window_start: string | Date; count: number }>(result).map((r) => ({
    date: new Date(r.window_start).toISOString().slice(0, 10),
    requests: Number(r.count),
  }));
}

/** Drops windows that can no longer matter: 15-minute ones after a day, daily ones after 31 days. */
export async function pruneRateLimitCounters(db: Db, nowMs = Date.now()): Promise<void> {
  await db.execute(sql`
    delete from rate_limit_counters
    where (bucket like '%:15m' and window_start < ${new Date(nowMs - 86_400_000).toISOString()})
       or (window_start < ${new Date(nowMs - 31 * 86_400_000).toISOString()})`);
}

/**
 * Counts one hit in each of several fixed windows in one statement; returns the first window
 * that is over its limit with the seconds until it resets, or undefined.
 */
export async function consumeFixedWindows(
  db: Db,
  windows: { bucket: string; windowS: number; limit: number }[],
  nowMs = Date.now(),
): Promise<{ bucket: string; retryAfterS: number } | undefined> {
  const values = windows.map((w) => sql`(${w.bucket}, ${windowStart(nowMs, w.windowS).toISOString()}, 1)`);
  const result = await db.execute(sql`
    insert into rate_limit_counters (bucket, window_start, count)
    values ${sql.join(values, sql`, `)}
    on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
    returning bucket, count`);
  const counts = new Map(rowsOf<{ bucket: string; count: number }>(result).map((r) => [r.bucket, Number(r.count)]));
  for (const w of windows) {
    if ((counts.get(w.bucket) ?? 0) > w.limit) {
      const end = windowStart(nowMs, w.windowS).getTime() + w.windowS * 1000;
      return { bucket: w.bucket, retryAfterS: Math.max(1, Math.ceil((end - nowMs) / 1000)) };
    }
  }
  return undefined;
}
