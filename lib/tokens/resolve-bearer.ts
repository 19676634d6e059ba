import "server-only";
import { eq, sql } from "drizzle-orm";
import { batchedLookup } from "../db/batcher";
import { perDatabase, type Db } from "../db/client";
import { athleteProfiles, personalAccessTokens, users, type TokenResource } from "../db/schema";
import { sha256Hex } from "../crypto/random";
import { ApiError } from "../http/errors";
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
 * The PAT lookup, by the token's hash. It runs on every PAT request, so its statement is built
 * once per database, and concurrent requests are looked up together (lib/db/batcher.ts): under
 * load one statement serves every request that arrived during the last one's round trip.
 */
const patLookup = perDatabase((db: Db) => {
  const statement = db
    .select({
      tokenHash: personalAccessTokens.tokenHash,
      id: personalAccessTokens.id,
      userId: personalAccessTokens.userId,
      scopes: personalAccessTokens.scopes,
      expiresAt: personalAccessTokens.expiresAt,
      revokedAt: personalAccessTokens.revokedAt,
      lastUsedAt: personalAccessTokens.lastUsedAt,
      user: selfUserColumns,
      profile: athleteProfiles,
    })
    .from(personalAccessTokens)
    .innerJoin(users, eq(users.id, personalAccessTokens.userId))
    .innerJoin(athleteProfiles, eq(athleteProfiles.userId, personalAccessTokens.userId))
    .where(sql`${personalAccessTokens.tokenHash} in (select jsonb_array_elements_text(${sql.placeholder("hashes")}::jsonb))`)
    .prepare("pat_lookup_by_hashes");
  return batchedLookup((hashes) => statement.execute({ hashes }), (row) => row.tokenHash);
});

async function resolvePat(db: Db, token: string): Promise<ResolvedBearer> {
  // The checksum rejects typos and random guesses without touching the database.
  if (!isWellFormedToken(token, "pat")) throw new ApiError("token_invalid", "The personal access token is malformed.");
  const row = await patLookup(db)(sha256Hex(token));
  if (!row) throw new ApiError("token_invalid", "The personal access token is not one this API issued.");
  const now = Date.now();
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
  };
}
