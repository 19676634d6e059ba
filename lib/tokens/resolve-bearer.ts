import "server-only";
import { eq, sql } from "drizzle-orm";
import { InFlightBatcher } from "../db/batcher";
import { perDatabase, type Db } from "../db/client";
import { athleteProfiles, personalAccessTokens, rateLimitCounters, users, type TokenResource } from "../db/schema";
import { sha256Hex } from "../crypto/random";
import { ApiError } from "../http/errors";
import { rateLimitResult, rateWindowsAt } from "../http/rate-limit";
import { isScope, type Scope } from "../auth/scopes";
import { selfUserColumns, type ResolvedBearer } from "../auth/actor";
import { isWellFormedToken } from "./format";
import { log } from "../log";
import { looksLikeJwt, resolveAccessToken } from "../oauth/access-token";

// Declared beside Actor, so lib/oauth/access-token.ts needs nothing from this file (which
// calls it); re-exported for callers that take it with resolveBearer.
export type { ResolvedBearer };

const LAST_USED_GRANULARITY_MS = 60_000;

/**
 * Turns an `Authorization` header into an actor, or throws the 401 that SPEC §7 and
 * CONTRACT §3 call for. `resource` is the one being called: an OAuth access token is bound to
 * one (RFC 8707) and refused by the other; a personal access token works at both.
 * @see RFC 6750 §2.1
 */
export async function resolveBearer(db: Db, authorization: string | null, resource: TokenResource = "v1"): Promise<ResolvedBearer> {
  if (!authorization) throw new ApiError("token_missing", "Send your token as `Authorization: Bearer <token>`.");
  const m = /^Bearer +([\x21-\x7e]+)\s*$/i.exec(authorization);
  if (!m) throw new ApiError("token_invalid", "The Authorization header must be `Bearer <token>`.");
  const token = m[1]!;

  if (token.startsWith("aas_pat_")) return resolvePat(db, token);
  if (looksLikeJwt(token)) return resolveAccessToken(db, token, resource);
  throw new ApiError("token_invalid", "The bearer token is not one this API issued.");
}

type PatWaiter = { resolve: (found: CountedPat | undefined) => void; reject: (err: unknown) => void };

/** A PAT's row as its batch found it, and, when the token was valid, the counts its request reached. */
type CountedPat = { row: PatRow; nowMs: number; counts: number[] | undefined };

type PatRow = Awaited<ReturnType<ReturnType<typeof patStatement>["execute"]>>[number];

/**
 * The PAT lookup, by the token's hash, which also counts each request of a valid token in its
 * owner's rate-limit windows (CONTRACT §10): one statement, so a PAT request makes one round
 * trip before its verb instead of a lookup and a count. The counting is a data-modifying CTE
 * that upserts `user:<id>:15m` and `:1d` for the tokens that are neither revoked nor expired
 * at the batch's instant (a revoked token never spends its owner's limit), and the select
 * returns each window's new total. It commits without waiting for the disk, as every count
 * does (lib/http/rate-limit.ts: nothing but counts is written here). Rows are upserted in the
 * order `addToCounters` uses (window start, then bucket, byte-wise), so that it and this
 * statement, on any instance, take the counters' locks in one order.
 */
function patStatement(db: Db) {
  const c = rateLimitCounters;
  const t = personalAccessTokens;
  const counted = db.$with("counted", { bucket: c.bucket, windowStart: c.windowStart, count: c.count }).as(sql`
    insert into ${c} (${sql.identifier(c.bucket.name)}, ${sql.identifier(c.windowStart.name)}, ${sql.identifier(c.count.name)})
    select 'user:' || ${t.userId} || w.s, w.w, sum(r.n)::integer
    from jsonb_to_recordset(${sql.placeholder("requests")}::jsonb) as r(h text, n integer)
      join ${t} on ${t.tokenHash} = r.h
      join ${users} on ${users.id} = ${t.userId}
      join ${athleteProfiles} on ${athleteProfiles.userId} = ${t.userId}
      cross join jsonb_to_recordset(${sql.placeholder("windows")}::jsonb) as w(s text, w timestamptz, i integer)
      cross join (select set_config('synchronous_commit', 'off', true)) as async_commit
    where ${t.revokedAt} is null and (${t.expiresAt} is null or ${t.expiresAt} > ${sql.placeholder("now")}::timestamptz)
    group by 1, 2
    order by 2, ('user:' || ${t.userId} || w.s) collate "C"
    on conflict (${sql.identifier(c.bucket.name)}, ${sql.identifier(c.windowStart.name)})
      do update set ${sql.identifier(c.count.name)} = ${c.count} + excluded.${sql.identifier(c.count.name)}
    returning ${sql.identifier(c.bucket.name)}, ${sql.identifier(c.windowStart.name)}, ${sql.identifier(c.count.name)}`);
  return db
    .with(counted)
    .select({
      tokenHash: t.tokenHash,
      id: t.id,
      userId: t.userId,
      scopes: t.scopes,
      expiresAt: t.expiresAt,
      revokedAt: t.revokedAt,
      lastUsedAt: t.lastUsedAt,
      user: selfUserColumns,
      profile: athleteProfiles,
      // Each window's total after this batch, in the windows' order; null for a token not counted.
      totals: sql<number[] | null>`(select jsonb_agg(${counted.count} order by w.i)
        from jsonb_to_recordset(${sql.placeholder("windows")}::jsonb) as w(s text, w timestamptz, i integer)
          join ${counted} on ${counted.bucket} = 'user:' || ${t.userId} || w.s and ${counted.windowStart} = w.w)`,
    })
    .from(t)
    .innerJoin(users, eq(users.id, t.userId))
    .innerJoin(athleteProfiles, eq(athleteProfiles.userId, t.userId))
    .where(sql`${t.tokenHash} in (select r.h from jsonb_to_recordset(${sql.placeholder("requests")}::jsonb) as r(h text, n integer))`)
    .prepare("pat_lookup_and_count");
}

/**
 * Concurrent PAT requests are looked up and counted together (lib/db/batcher.ts): under load
 * one statement serves every request that arrived during the last one's round trip. Each
 * request learns the count it reached: its owner's new total less the owner's requests queued
 * after it in the batch (two PATs of one person share the person's windows).
 */
const patLookup = perDatabase((db: Db) => {
  const statement = patStatement(db);
  const batcher = new InFlightBatcher<string, PatWaiter[]>({
    send: async (batch) => {
      const nowMs = Date.now();
      const windows = rateWindowsAt(nowMs);
      const rows = await statement.execute({
        requests: JSON.stringify([...batch].map(([h, waiters]) => ({ h, n: waiters.length }))),
        windows: JSON.stringify(windows.map((w, i) => ({ s: w.suffix, w: w.start.toISOString(), i }))),
        now: new Date(nowMs).toISOString(),
      });
      const found = new Map(rows.map((row) => [row.tokenHash, row]));
      // Each owner's requests counted in this batch, then each request's place among them.
      const ofOwner = new Map<string, number>();
      for (const [h, waiters] of batch) {
        const row = found.get(h);
        if (row?.totals) ofOwner.set(row.userId, (ofOwner.get(row.userId) ?? 0) + waiters.length);
      }
      const placed = new Map<string, number>();
      for (const [h, waiters] of batch) {
        const row = found.get(h);
        for (const w of waiters) {
          if (!row) {
            w.resolve(undefined);
            continue;
          }
          const totals = row.totals;
          let counts: number[] | undefined;
          if (totals) {
            const place = (placed.get(row.userId) ?? 0) + 1;
            placed.set(row.userId, place);
            const behind = ofOwner.get(row.userId)! - place;
            counts = totals.map((total) => Number(total) - behind);
          }
          w.resolve({ row, nowMs, counts });
        }
      }
    },
    fail: (waiters, err) => {
      for (const w of waiters) w.reject(err);
    },
  });
  return (hash: string) => new Promise<CountedPat | undefined>((resolve, reject) => batcher.entryFor(hash, () => []).push({ resolve, reject }));
});

async function resolvePat(db: Db, token: string): Promise<ResolvedBearer> {
  // The checksum rejects typos and random guesses without touching the database.
  if (!isWellFormedToken(token, "pat")) throw new ApiError("token_invalid", "The personal access token is malformed.");
  const found = await patLookup(db)(sha256Hex(token));
  if (!found) throw new ApiError("token_invalid", "The personal access token is not one this API issued.");
  // Judged at the instant its statement was, so a token is refused exactly when it was not counted.
  const { row, nowMs: now, counts } = found;
  if (row.revokedAt) throw new ApiError("token_revoked", "This personal access token was revoked.");
  if (row.expiresAt && row.expiresAt.getTime() <= now) {
    throw new ApiError("token_expired", `This personal access token expired at ${row.expiresAt.toISOString()}.`);
  }
  if (!row.lastUsedAt || now - row.lastUsedAt.getTime() > LAST_USED_GRANULARITY_MS) {
    // Recorded at minute granularity so a busy token does not write on every request.
    db.update(personalAccessTokens)
      .set({ lastUsedAt: new Date(now) })
      .where(eq(personalAccessTokens.id, row.id))
      .catch((err: unknown) => log.warn("could not record token use", { error: String(err) }));
  }
  return {
    actor: { kind: "pat", userId: row.userId, tokenId: row.id, scopes: new Set(row.scopes.filter(isScope) as Scope[]) },
    rateBucket: `user:${row.userId}`,
    billing: { hasSubscription: row.profile.hasSubscription, trialEndsAt: row.profile.trialEndsAt },
    self: { user: row.user, profile: row.profile },
    counted: counts && rateLimitResult(counts, now),
  };
}
