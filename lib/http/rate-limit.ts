import "server-only";
import { sql, type SQL } from "drizzle-orm";
import { InFlightBatcher } from "../db/batcher";
import { bareColumn, perDatabase, rowsAs, selectAs, type Db, type RawBigint } from "../db/client";
import { sha256Hex } from "../crypto/random";
import { getEnv } from "../env";
import { rateLimitCounters } from "../db/schema";

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
 * Counts one in `bucket`'s epoch-aligned window of `windowS` seconds: the count with this one,
 * and the whole seconds until the window ends (a `Retry-After` once the count is past a bound).
 */
export async function countOneInWindow(db: Db, bucket: string, windowS: number, nowMs = Date.now()): Promise<{ used: number; resetS: number }> {
  const start = windowStart(nowMs, windowS);
  const totals = await addToCounters(db, [{ bucket, windowStart: start, n: 1 }]);
  return { used: [...totals.values()][0] ?? 0, resetS: Math.max(1, Math.ceil((start.getTime() + windowS * 1000 - nowMs) / 1000)) };
}

/** The longest bucket name stored as it is; a longer one is stored by its digest. */
export const MAX_BUCKET_CHARS = 160;

/**
 * The name a bucket's counters are stored under: the bucket itself, or, when it is longer than
 * MAX_BUCKET_CHARS or holds control characters, its start, a SHA-256 of the whole and its window suffix. Whatever a caller puts in a bucket
 * (an address, an email, a client id someone typed), its row fits the primary-key index, so no
 * bucket can make the counter statement fail.
 */
export function storedBucket(bucket: string): string {
  if (bucket.length <= MAX_BUCKET_CHARS && !/[\u0000-\u001f\u007f]/.test(bucket)) return bucket;
  // The window suffix stays readable (`:15m`, `:1d`): pruning goes by it.
  const suffix = /:\w{1,4}$/.exec(bucket)?.[0] ?? "";
  return `${bucket.slice(0, 64).replace(/[\u0000-\u001f\u007f]/g, "?")}#${sha256Hex(bucket)}${suffix}`;
}

/** The key of one window's counter: its start and its bucket. */
export function counterKey(c: { bucket: string; windowStart: Date }): string {
  return `${c.windowStart.getTime()}|${c.bucket}`;
}

/** What `addToCounters` answers for each counter: its bucket, window start (in milliseconds) and new total. */
const addedColumns = {
  bucket: rateLimitCounters.bucket,
  // Computed: the window's start in milliseconds.
  ms: sql<RawBigint>`(extract(epoch from ${rateLimitCounters.windowStart}) * 1000)::bigint`,
  count: rateLimitCounters.count,
};

/**
 * Adds `n` to each window's shared counter in one statement (the same SQL whatever the count,
 * so it stays one prepared statement) and returns each counter's new total by `counterKey`.
 * Each window must appear once. Rows go in `counterKey` order, so that two instances upserting
 * the same rows take their locks in one order. Takes the plain database, never a transaction:
 * the statement's commit does not wait for the disk (below), which must not spread to a write.
 */
export async function addToCounters(
  db: Db,
  counts: readonly { bucket: string; windowStart: Date; n: number }[],
): Promise<Map<string, number>> {
  const asGiven = new Map(counts.map((c) => [storedBucket(c.bucket), c.bucket]));
  const rows = [...counts]
    .sort((x, y) => (counterKey(x) < counterKey(y) ? -1 : 1))
    .map((c) => ({ b: storedBucket(c.bucket), w: c.windowStart.toISOString(), n: c.n }));
  // A count is worth less than a wait for the disk: this statement commits without waiting
  // for its WAL to be flushed (the setting lasts until the statement's own commit), because an
  // occasional slow fsync would stall every request of the batch. A PostgreSQL crash may forget
  // the last fraction of a second of counts; nothing else is written here.
  const c = rateLimitCounters;
  const result = await db.execute(sql`
    insert into ${c} (${bareColumn(c.bucket)}, ${bareColumn(c.windowStart)}, ${bareColumn(c.count)})
    select b, w, n
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(b text, w timestamptz, n integer),
      (select set_config('synchronous_commit', 'off', true)) as async_commit
    on conflict (${bareColumn(c.bucket)}, ${bareColumn(c.windowStart)}) do update set ${bareColumn(c.count)} = ${c.count} + excluded.${bareColumn(c.count)}
    returning ${selectAs(addedColumns)}`);
  return new Map(
    rowsAs(addedColumns, result).map((r) => [
      counterKey({ bucket: asGiven.get(r.bucket) ?? r.bucket, windowStart: new Date(Number(r.ms)) }),
      Number(r.count),
    ]),
  );
}

/** One request counted in one fixed window. */
type Hit = { bucket: string; windowStart: Date };

type PendingCount = {
  bucket: string;
  windowStart: Date;
  /** Hits of this window waiting for the flush. */
  n: number;
  waiters: { position: number; resolve: (count: number) => void; reject: (err: unknown) => void }[];
};

/**
 * Adds hits to the database's counters in batches (lib/db/batcher.ts): the hits that arrive
 * while one upsert is on its way go together in the next one. Every hit is counted in the
 * database before its request is answered, so the counts are exact across instances; under
 * load one statement and one commit serve many requests instead of one each. Each hit learns
 * the count its own request reached: the window's new total less the hits queued after it.
 */
const batcherOf = perDatabase(
  (db) =>
    new InFlightBatcher<string, PendingCount>({
      send: async (batch) => {
        const totals = await addToCounters(db, [...batch.values()]);
        for (const [key, e] of batch) {
          const total = totals.get(key) ?? e.n;
          for (const w of e.waiters) w.resolve(total - e.n + w.position);
        }
      },
      fail: (e, err) => {
        for (const w of e.waiters) w.reject(err);
      },
    }),
);

function countHit(db: Db, hit: Hit): Promise<number> {
  const entry = batcherOf(db).entryFor(counterKey(hit), () => ({ ...hit, n: 0, waiters: [] }));
  const position = ++entry.n;
  return new Promise<number>((resolve, reject) => entry.waiters.push({ position, resolve, reject }));
}

/** Counts one request in each window, in the database; resolves to each window's count so far. */
function countHits(db: Db, hits: Hit[]): Promise<number[]> {
  return Promise.all(hits.map((h) => countHit(db, h)));
}

/**
 * Counts one request against both fixed windows of `bucket` and tells whether either is
 * exceeded. The counters live in the database so every instance shares them. `scale` multiplies
 * the configured limits (the console's windows: CONSOLE_LIMIT_SCALE).
 */
export async function consumeRateLimit(db: Db, bucket: string, nowMs = Date.now(), scale = 1): Promise<RateLimitResult> {
  const starts = WINDOWS.map((w) => windowStart(nowMs, w.windowS));
  const counts = await countHits(
    db,
    WINDOWS.map((w, i) => ({ bucket: `${bucket}:${w.suffix}`, windowStart: starts[i]! })),
  );
  return rateLimitResult(counts, nowMs, scale);
}

/**
 * The windows' starts at `nowMs`, with the suffix each window's counter row adds to its bucket
 * (`user:ath_1:15m`), in the order `rateLimitResult` takes their counts.
 */
function rateWindowsAt(nowMs: number): { suffix: string; start: Date }[] {
  return WINDOWS.map((w) => ({ suffix: `:${w.suffix}`, start: windowStart(nowMs, w.windowS) }));
}

/**
 * The result of a request counted elsewhere (a statement that counts as it looks the caller
 * up): `counts` are the windows' counts the request reached, in `rateWindowsAt`'s order.
 */
function rateLimitResult(counts: readonly number[], nowMs: number, scale = 1): RateLimitResult {
  const env = getEnv();
  const limits = { "15min": env.rateLimit15Min * scale, daily: env.rateLimitDaily * scale };
  const windows = WINDOWS.map((w, i): RateWindow => {
    const end = windowStart(nowMs, w.windowS).getTime() + w.windowS * 1000;
    return {
      name: w.name,
      limit: limits[w.name],
      windowS: w.windowS,
      used: counts[i]!,
      resetS: Math.max(1, Math.ceil((end - nowMs) / 1000)),
    };
  });
  // With both windows used up, the one that reopens last: `Retry-After` is when a request can succeed.
  // In the day's last quarter hour both reopen at midnight; the daily one (the longer, later in
  // WINDOWS) is named then, as it is the limit the caller has really run into.
  const over = windows.filter((w) => w.used > w.limit);
  return { windows, exceeded: over.length ? over.reduce((a, b) => (b.resetS >= a.resetS ? b : a)) : undefined };
}

/** The windows as a counting statement's `windows` parameter: each one's suffix, start and place. */
function windowsJson(nowMs: number): string {
  return JSON.stringify(rateWindowsAt(nowMs).map((w, i) => ({ s: w.suffix, w: w.start.toISOString(), i })));
}

/** The `windows` placeholder as rows `w(s, w, i)`. */
const windowRows = () => sql`jsonb_to_recordset(${sql.placeholder("windows")}::jsonb) as w(s text, w timestamptz, i integer)`;

/**
 * A data-modifying CTE, `counted`, for a lookup that counts as it looks up: each `requests`
 * row (`r`, with its `n`, the requests that asked for it) that `from` joins and `where` finds
 * valid is counted under `bucket`, in both its windows (the `windows` placeholder:
 * `countedLookup` fills it). Rows go in `addToCounters`' order (window start, then bucket,
 * byte-wise), so that this statement and that one, on any instance, take the counters' locks
 * in one order, and the statement commits without waiting for the disk, as every count does.
 * Bucket names must be stored as they are (`storedBucket`): the ids the service makes are.
 */
export function countingCte(db: Db, hits: { bucket: SQL; from: SQL; where: SQL }) {
  const c = rateLimitCounters;
  return db.$with("counted", { bucket: c.bucket, windowStart: c.windowStart, count: c.count }).as(sql`
    insert into ${c} (${bareColumn(c.bucket)}, ${bareColumn(c.windowStart)}, ${bareColumn(c.count)})
    select h.b || w.s, w.w, h.n
    from (select ${hits.bucket} as b, sum(r.n)::integer as n from ${hits.from} where ${hits.where} group by 1) as h
      cross join ${windowRows()}
      cross join (select set_config('synchronous_commit', 'off', true)) as async_commit
    order by w.w, (h.b || w.s) collate "C"
    on conflict (${bareColumn(c.bucket)}, ${bareColumn(c.windowStart)}) do update set ${bareColumn(c.count)} = ${c.count} + excluded.${bareColumn(c.count)}
    returning ${bareColumn(c.bucket)}, ${bareColumn(c.windowStart)}, ${bareColumn(c.count)}`);
}

/** A column of the lookup: `bucket`'s window totals after the statement, in the windows' order, or null if it counted nothing there. */
export function windowTotals(counted: ReturnType<typeof countingCte>, bucket: SQL) {
  return sql<number[] | null>`(select jsonb_agg(${counted.count} order by w.i)
    from ${windowRows()}
      join ${counted} on ${counted.bucket} = ${bucket} || w.s and ${counted.windowStart} = w.w)`;
}

/** What a counted lookup gives each request: the row found, and the request's count when it was counted. */
export type Counted<Row> = { row: Row; nowMs: number; rl: RateLimitResult | undefined };

type CountedWaiter<Row> = { resolve: (found: Counted<Row> | undefined) => void; reject: (err: unknown) => void };

/**
 * A lookup that counts each request of a valid credential in its bucket's windows in the same
 * statement (`countingCte`, and `windowTotals` as its `totals` column), in batches (lib/db/batcher.ts): one statement and
 * one round trip before the verb instead of a lookup and a count. `execute` runs the statement
 * with `requests` (a JSON array: each key's `request` with its `n`, the requests that asked for
 * it), `windows` and `now` (the batch's instant, at which validity is judged in SQL; the caller
 * judges it in JS at `nowMs`, the same instant). Each request learns the count it reached: its
 * bucket's new total less the bucket's requests placed after it in the batch (several keys can
 * share a bucket: two PATs of one person).
 */
export function countedLookup<Row extends { totals: readonly (number | string)[] | null }>(ops: {
  execute: (params: { requests: string; windows: string; now: string }) => Promise<Row[]>;
  keyOf: (row: Row) => string;
  bucketOf: (row: Row) => string;
}): (key: string, request: Record<string, string>) => Promise<Counted<Row> | undefined> {
  type Entry = { request: Record<string, string>; waiters: CountedWaiter<Row>[] };
  const batcher = new InFlightBatcher<string, Entry>({
    send: async (batch) => {
      const nowMs = Date.now();
      const rows = await ops.execute({
        requests: JSON.stringify([...batch.values()].map((e) => ({ ...e.request, n: e.waiters.length }))),
        windows: windowsJson(nowMs),
        now: new Date(nowMs).toISOString(),
      });
      const found = new Map(rows.map((row) => [ops.keyOf(row), row]));
      const inBucket = new Map<string, number>();
      for (const [key, e] of batch) {
        const row = found.get(key);
        if (row?.totals) inBucket.set(ops.bucketOf(row), (inBucket.get(ops.bucketOf(row)) ?? 0) + e.waiters.length);
      }
      const placed = new Map<string, number>();
      for (const [key, e] of batch) {
        const row = found.get(key);
        const totals = row?.totals;
        for (const w of e.waiters) {
          if (row === undefined) {
            w.resolve(undefined);
            continue;
          }
          let rl: RateLimitResult | undefined;
          if (totals) {
            const bucket = ops.bucketOf(row);
            const place = (placed.get(bucket) ?? 0) + 1;
            placed.set(bucket, place);
            const after = inBucket.get(bucket)! - place;
            rl = rateLimitResult(totals.map((total) => Number(total) - after), nowMs);
          }
          w.resolve({ row, nowMs, rl });
        }
      }
    },
    fail: (e, err) => {
      for (const w of e.waiters) w.reject(err);
    },
  });
  return (key, request) =>
    new Promise((resolve, reject) => batcher.entryFor(key, () => ({ request, waiters: [] })).waiters.push({ resolve, reject }));
}

/**
 * The current windows of `bucket` as they stand, without counting a request (usage reports).
 * A window nobody has touched yet reads as unused.
 */
export async function peekRateLimit(db: Db, bucket: string, nowMs = Date.now()): Promise<RateWindow[]> {
  const env = getEnv();
  const limits = { "15min": env.rateLimit15Min, daily: env.rateLimitDaily };
  const starts = WINDOWS.map((w) => windowStart(nowMs, w.windowS));
  const names = WINDOWS.map((w) => storedBucket(`${bucket}:${w.suffix}`));
  const c = rateLimitCounters;
  const peeked = { bucket: c.bucket, count: c.count };
  const result = await db.execute(sql`
    select ${selectAs(peeked)} from ${c}
    where (${c.bucket} = ${names[0]} and ${c.windowStart} = ${starts[0]!.toISOString()})
       or (${c.bucket} = ${names[1]} and ${c.windowStart} = ${starts[1]!.toISOString()})`);
  const counts = new Map(rowsAs(peeked, result).map((r) => [r.bucket, Number(r.count)]));
  return WINDOWS.map((w, i) => ({
    name: w.name,
    limit: limits[w.name],
    windowS: w.windowS,
    used: counts.get(names[i]!) ?? 0,
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
  const c = rateLimitCounters;
  const perDay = { window_start: c.windowStart, count: c.count };
  const result = await db.execute(sql`
    select ${selectAs(perDay)} from ${c}
    where ${c.bucket} = ${storedBucket(`${bucket}:1d`)} and ${c.windowStart} >= ${since.toISOString()}
    order by ${c.windowStart}`);
  return rowsAs(perDay, result).map((r) => ({
    date: new Date(r.window_start).toISOString().slice(0, 10),
    requests: Number(r.count),
  }));
}

/** Drops windows that can no longer matter: 15-minute ones after a day, daily ones after 31 days. */
export async function pruneRateLimitCounters(db: Db, nowMs = Date.now()): Promise<void> {
  const c = rateLimitCounters;
  await db.execute(sql`
    delete from ${c}
    where (${c.bucket} like '%:15m' and ${c.windowStart} < ${new Date(nowMs - 86_400_000).toISOString()})
       or (${c.windowStart} < ${new Date(nowMs - 31 * 86_400_000).toISOString()})`);
}
