import "server-only";
import { eq, sql } from "drizzle-orm";
import { perDatabase, type Db } from "../db/client";
import { athleteProfiles, personalAccessTokens, users, type TokenResource } from "../db/schema";
import { sha256Hex } from "../crypto/random";
import { ApiError } from "../http/errors";
import { countedLookup, countingCte, windowTotals } from "../http/rate-limit";
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

/**
 * The PAT lookup, by the token's hash, which also counts each request of a valid token in its
 * owner's rate-limit windows (CONTRACT §10) in the same statement (`countedLookup` in
 * lib/http/rate-limit.ts): a PAT request makes one statement before its verb, not a lookup and
 * a count. A token is counted when it is neither revoked nor expired at the batch's instant,
 * so a revoked one never spends its owner's limit. Built once per database; concurrent
 * requests go together, one statement for every request that arrived during the last one's
 * round trip.
 */
const patLookup = perDatabase((db: Db) => {
  const t = personalAccessTokens;
  const owner = sql`'user:' || ${t.userId}`;
  const valid = sql`${t.revokedAt} is null and (${t.expiresAt} is null or ${t.expiresAt} > ${sql.placeholder("now")}::timestamptz)`;
  const requests = sql`jsonb_to_recordset(${sql.placeholder("requests")}::jsonb) as r(h text, n integer)`;
  const counted = countingCte(db, {
    bucket: owner,
    from: sql`${requests}
      join ${t} on ${t.tokenHash} = r.h
      join ${users} on ${users.id} = ${t.userId}
      join ${athleteProfiles} on ${athleteProfiles.userId} = ${t.userId}`,
    where: valid,
  });
  const statement = db
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
      totals: windowTotals(counted, owner),
    })
    .from(t)
    .innerJoin(users, eq(users.id, t.userId))
    .innerJoin(athleteProfiles, eq(athleteProfiles.userId, t.userId))
    .where(sql`${t.tokenHash} in (select r.h from ${requests})`)
    .prepare("pat_lookup_and_count");
  return countedLookup({
    execute: (params) => statement.execute(params),
    keyOf: (row) => row.tokenHash,
    bucketOf: (row) => `user:${row.userId}`,
  });
});

async function resolvePat(db: Db, token: string): Promise<ResolvedBearer> {
  // The checksum rejects typos and random guesses without touching the database.
  if (!isWellFormedToken(token, "pat")) throw new ApiError("token_invalid", "The personal access token is malformed.");
  const hash = sha256Hex(token);
  const found = await patLookup(db)(hash, { h: hash });
  if (!found) throw new ApiError("token_invalid", "The personal access token is not one this API issued.");
  // Judged at the instant its statement was, so a token is refused exactly when it was not counted.
  const { row, nowMs: now, rl } = found;
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
    counted: rl,
  };
}
