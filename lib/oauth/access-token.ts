import "server-only";
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from "jose";
import { createHash, randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { perDatabase, type Db } from "../db/client";
import { athleteProfiles, oauthGrants, oauthTokenFamilies, users, type TokenResource } from "../db/schema";
import { safeEqual } from "../crypto/random";
import { getEnv } from "../env";
import { ApiError } from "../http/errors";
import { countedLookup, countingCte, windowTotals } from "../http/rate-limit";
import { isScope, type Scope } from "../auth/scopes";
import { selfUserColumns, type ResolvedBearer } from "../auth/actor";
import { findClientCached } from "./client-cache";
import { signingKey, verificationKeys, verifiedTokens } from "./keys";
import { resourceOf, resourceUrl } from "./resources";
import { log } from "../log";

export const ACCESS_TOKEN_TTL_S = 3600;

type AccessTokenClaims = {
  client_id: string;
  scope?: string;
  /** Grant and token family, for athlete tokens; absent on client-credentials tokens. */
  gid?: string;
  fam?: string;
  /** Client-credentials tokens: the fingerprint of the secret they were issued under. */
  csf?: string;
};

/**
 * A fingerprint of an app's current secret (of its stored hash; the secret is not derivable from
 * it): a client-credentials token carries the one it was issued under and is refused once the
 * app's secret is another. Rotating the secret is the owner's answer to a leak, and it ends the
 * tokens the leaked secret obtained at once, with no column to keep: the secret hash is it.
 */
export function clientSecretFingerprint(secretHash: string | null): string {
  return createHash("sha256").update(`aas-client-credentials:${secretHash ?? ""}`).digest("base64url").slice(0, 22);
}

/**
 * An RFC 9068 access token: ES256 JWT, `typ: at+jwt`, one hour, its audience the one resource it
 * is for (`{base_url}/v1` unless `resource` says `/mcp`; RFC 8707).
 * @see RFC 9068 §2
 */
export async function issueAccessToken(
  db: Db,
  t: {
    subject: string;
    clientId: string;
    scopes: readonly string[];
    grantId?: string;
    familyId?: string;
    clientSecretHash?: string | null;
    resource?: TokenResource;
  },
): Promise<{ token: string; expiresIn: number }> {
  const env = getEnv();
  const key = await signingKey(db);
  const claims: AccessTokenClaims = { client_id: t.clientId };
  if (t.scopes.length) claims.scope = t.scopes.join(" ");
  if (t.grantId) claims.gid = t.grantId;
  if (t.familyId) claims.fam = t.familyId;
  if (t.clientSecretHash !== undefined) claims.csf = clientSecretFingerprint(t.clientSecretHash);
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: key.kid })
    .setIssuer(env.baseUrl)
    .setSubject(t.subject)
    .setAudience(resourceUrl(env, t.resource ?? "v1"))
    .setIssuedAt()
    .setExpirationTime(`${ACCESS_TOKEN_TTL_S}s`)
    .setJti(randomUUID())
    .sign(key.privateKey);
  return { token, expiresIn: ACCESS_TOKEN_TTL_S };
}

/**
 * A client-credentials token: the app acting as itself, with no grant and no scope, bound to
 * the app's current secret so that rotating the secret ends it.
 */
export function issueAppAccessToken(db: Db, client: { clientId: string; secretHash: string | null }) {
  return issueAccessToken(db, { subject: client.clientId, clientId: client.clientId, scopes: [], clientSecretHash: client.secretHash });
}

export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/** Verified tokens kept at most; the oldest go first. */
const VERIFIED_TOKENS_MAX = 10_000;

/** A token for the other resource is refused as `token_invalid`, saying which resource it is for (RFC 8707). */
function checkAudience(aud: JWTPayload["aud"], resource: TokenResource | undefined): void {
  const env = getEnv();
  const auds = typeof aud === "string" ? [aud] : (aud ?? []);
  const bound = auds.map((a) => resourceOf(env, a)).find((r) => r !== undefined);
  if (!bound) throw new ApiError("token_invalid", "The access token is not valid for this API.");
  if (resource !== undefined && bound !== resource) {
    throw new ApiError("token_invalid", `The access token is for ${resourceUrl(env, bound)}, not ${resourceUrl(env, resource)}; get a token with resource=${resourceUrl(env, resource)}.`);
  }
}

/**
 * Verifies signature, type, issuer, audience and lifetime; throws the matching 401. `resource`
 * is the resource being called: a token for the other one is refused. Without it (revocation)
 * a token for either resource verifies.
 *
 * A token that verified is remembered (by its exact text) until it expires, so a client
 * reusing its access token for an hour pays for the ES256 check once, not on every request:
 * the same bytes verify the same way every time. What can change is checked on every use all
 * the same: its lifetime here, and its grant and family (or app) by the caller.
 * @see RFC 9068 §4
 */
export async function verifyAccessToken(db: Db, token: string, resource?: TokenResource): Promise<AccessTokenClaims & JWTPayload> {
  const known = verifiedTokens();
  const hit = known.get(token);
  if (hit) {
    if (hit.claims.exp <= Math.floor(Date.now() / 1000)) {
      known.delete(token);
      throw new ApiError("token_expired", "The access token has expired; refresh it.");
    }
    checkAudience((hit.claims as JWTPayload).aud, resource);
    return hit.claims as AccessTokenClaims & JWTPayload;
  }
  const env = getEnv();
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    throw new ApiError("token_invalid", "The access token is malformed.");
  }
  try {
    const { payload } = await jwtVerify<AccessTokenClaims>(token, await verificationKeys(db, kid), {
      typ: "at+jwt",
      algorithms: ["ES256"],
      issuer: env.baseUrl,
      audience: [env.apiBaseUrl, env.mcpUrl],
      requiredClaims: ["sub", "client_id", "exp", "iat", "jti"],
    });
    checkAudience(payload.aud, resource);
    if (known.size >= VERIFIED_TOKENS_MAX) known.delete(known.keys().next().value!);
    known.set(token, { claims: payload as typeof payload & { exp: number } });
    return payload;
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw new ApiError("token_expired", "The access token has expired; refresh it.");
    if (err instanceof ApiError) throw err;
    if (err instanceof joseErrors.JOSEError) throw new ApiError("token_invalid", "The access token is not valid for this API.");
    throw err;
  }
}

/**
 * A token family's grant, athlete and state, by the family's id, the athlete and the app the
 * token names; it also counts each request of a valid token in its app's rate-limit windows
 * (CONTRACT §10) in the same statement (`countedLookup` in lib/http/rate-limit.ts), as the PAT
 * lookup does. Valid: neither the grant nor the family revoked, and both the athlete's and the
 * app's. It runs on every request with an athlete's access token, so it is built once per
 * database and concurrent requests are looked up together (lib/db/batcher.ts): a JWT costs
 * what a PAT costs plus the signature check.
 */
const familyLookup = perDatabase((db: Db) => {
  const f = oauthTokenFamilies;
  const g = oauthGrants;
  const app = sql`'app:' || ${g.clientId}`;
  const requests = sql`jsonb_to_recordset(${sql.placeholder("requests")}::jsonb) as r(f text, s text, c text, n integer)`;
  const counted = countingCte(db, {
    bucket: app,
    from: sql`${requests}
      join ${f} on ${f.id} = r.f
      join ${g} on ${g.id} = ${f.grantId}
      join ${users} on ${users.id} = ${g.userId}
      join ${athleteProfiles} on ${athleteProfiles.userId} = ${g.userId}`,
    where: sql`${g.revokedAt} is null and ${f.revokedAt} is null and ${g.userId} = r.s and ${g.clientId} = r.c`,
  });
  const statement = db
    .with(counted)
    .select({
      familyId: f.id,
      grantId: g.id,
      clientId: g.clientId,
      grantLastUsedAt: g.lastUsedAt,
      grantRevokedAt: g.revokedAt,
      familyRevokedAt: f.revokedAt,
      userId: g.userId,
      user: selfUserColumns,
      profile: athleteProfiles,
      totals: windowTotals(counted, app),
    })
    .from(f)
    .innerJoin(g, eq(g.id, f.grantId))
    .innerJoin(users, eq(users.id, g.userId))
    .innerJoin(athleteProfiles, eq(athleteProfiles.userId, g.userId))
    .where(sql`${f.id} in (select r.f from ${requests})`)
    .prepare("oauth_family_lookup_and_count");
  return countedLookup({
    execute: (params) => statement.execute(params),
    // The token's family, athlete and app: a row for another athlete or app is no row.
    keyOf: (row) => familyKey(row.familyId, row.userId, row.clientId),
    bucketOf: (row) => `app:${row.clientId}`,
  });
});

const familyKey = (familyId: string, userId: string, clientId: string) => JSON.stringify([familyId, userId, clientId]);

/**
 * Access tokens are also checked against their grant and family on every request, so a
 * disconnected app or a revoked family loses access at once (CONTRACT §6). A
 * client-credentials token is checked against its app and the app's current secret (from the
 * client cache, which a deletion or a rotation invalidates at once in this process, see
 * client-cache.ts). `resource` is the resource being called (RFC 8707): a token for the other is refused.
 */
export async function resolveAccessToken(db: Db, token: string, resource: TokenResource = "v1"): Promise<ResolvedBearer> {
  const claims = await verifyAccessToken(db, token, resource);
  const clientId = claims.client_id;
  if (!claims.fam) {
    const client = await findClientCached(db, clientId);
    if (!client) throw new ApiError("token_revoked", "The app this token was issued to no longer exists.");
    if (client.kind !== "confidential" || !claims.csf || !safeEqual(claims.csf, clientSecretFingerprint(client.secretHash))) {
      throw new ApiError("token_revoked", "The app's client secret was rotated since this token was issued; request a new one.");
    }
    return { actor: { kind: "app", clientId }, rateBucket: `app:${clientId}`, billing: null };
  }
  const sub = claims.sub ?? "";
  const found = await familyLookup(db)(familyKey(claims.fam, sub, clientId), { f: claims.fam, s: sub, c: clientId });
  // The statement counted the token exactly when it found it valid, by the same rules.
  if (!found || found.row.grantRevokedAt || found.row.familyRevokedAt || !found.rl) {
    throw new ApiError("token_revoked", "This access token was revoked, or the athlete disconnected the app.");
  }
  const { row, rl } = found;
  recordGrantUse(db, row.grantId, row.grantLastUsedAt);
  const scopes = new Set((claims.scope ?? "").split(" ").filter(isScope) as Scope[]);
  return {
    actor: { kind: "oauth", userId: row.userId, clientId, grantId: claims.gid ?? "", scopes },
    rateBucket: `app:${clientId}`,
    billing: { hasSubscription: row.profile.hasSubscription, trialEndsAt: row.profile.trialEndsAt },
    self: { user: row.user, profile: row.profile },
    counted: rl,
  };
}

const LAST_USED_GRANULARITY_MS = 60_000;

/** The grant's last use for /settings/apps, to the minute, so a busy app does not write on every request. */
function recordGrantUse(db: Db, grantId: string, lastUsedAt: Date | null): void {
  const now = Date.now();
  if (lastUsedAt && now - lastUsedAt.getTime() <= LAST_USED_GRANULARITY_MS) return;
  db.update(oauthGrants)
    .set({ lastUsedAt: new Date(now) })
    .where(eq(oauthGrants.id, grantId))
    .catch((err: unknown) => log.warn("could not record an app's use", { error: String(err) }));
}
