import "server-only";
import { createHash } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client";
import { oauthCodes, oauthGrants, oauthRefreshTokens, oauthTokenFamilies, type TokenResource } from "../db/schema";
import { safeEqual, sha256Hex } from "../crypto/random";
import { getEnv } from "../env";
import { newId } from "../ids";
import { generateToken, isWellFormedToken } from "../tokens/format";
import { isScope } from "../auth/scopes";
import { OAuthError } from "./errors";
import { authenticateClient, type OAuthClient } from "./client-auth";
import { issueAccessToken, issueAppAccessToken } from "./access-token";
import { signingKey } from "./keys";
import { resourceOf, resourceUrl } from "./resources";
import { endGrant } from "../oauth-grants/end-grant";
import { inTransaction } from "../db/transaction";

export const REFRESH_TOKEN_TTL_S = 90 * 86_400;

export type TokenResponse = {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token?: string;
  /** Absent for a client-credentials token, which carries no scope (RFC 6749 §3.3: a scope is at least one token). */
  scope?: string;
};

const invalidGrant = (d: string) => new OAuthError("invalid_grant", d);

/**
 * POST /oauth/token for a form already read, with no parameter repeated (oauthEndpoint checked
 * that). Client authentication first, then the grant.
 *
 * `prove` is told which client sent the request as soon as that is proved: for a confidential
 * client once its secret is verified, for a public client (no secret) only once a code or
 * refresh token of its own was redeemed. Until then the request counts against its address.
 * @see RFC 6749 §3.2, §4.1.3, §4.4, §6; RFC 7636 §4.5; RFC 8707 §2.2
 */
export async function tokenRequest(
  db: Db,
  authorization: string | null,
  form: URLSearchParams,
  prove: (clientId: string) => void = () => {},
): Promise<TokenResponse> {
  const client = await authenticateClient(db, authorization, form);
  if (client.kind === "confidential") prove(client.clientId);
  const resource = askedResource(form);
  // Loaded (or created) outside the grant's transaction, so a rollback cannot leave this process
  // signing with a key that was never stored.
  await signingKey(db);
  const tokens = await grant(db, client, form, resource);
  prove(client.clientId);
  return tokens;
}

/**
 * The `resource` a token request names (RFC 8707 §2.2), if any: one of this server's two, else
 * `invalid_target`. A code or refresh token is for the resource its authorization named, and
 * asking for the other is refused rather than quietly answered with a token it does not name.
 */
function askedResource(form: URLSearchParams): TokenResource | undefined {
  const asked = form.get("resource");
  if (asked === null) return undefined;
  const env = getEnv();
  const resource = resourceOf(env, asked);
  if (!resource) throw new OAuthError("invalid_target", `resource must be ${env.apiBaseUrl} or ${env.mcpUrl}.`);
  return resource;
}

function checkSameResource(asked: TokenResource | undefined, bound: TokenResource): void {
  if (asked !== undefined && asked !== bound) {
    throw new OAuthError("invalid_target", `This authorization is for ${resourceUrl(getEnv(), bound)}; authorize again with resource=${resourceUrl(getEnv(), asked)}.`);
  }
}

function grant(db: Db, client: OAuthClient, form: URLSearchParams, resource: TokenResource | undefined): Promise<TokenResponse> {
  switch (form.get("grant_type")) {
    case "authorization_code":
      return exchangeCode(db, client, form, resource);
    case "refresh_token":
      return refresh(db, client, form, resource);
    case "client_credentials":
      if (resource === "mcp") throw new OAuthError("invalid_target", "A client-credentials token acts as the app itself and is only for the API at /v1.");
      return clientCredentials(db, client, form);
    case null:
      throw new OAuthError("invalid_request", "grant_type is required.");
    default:
      throw new OAuthError("unsupported_grant_type", "grant_type must be authorization_code, refresh_token or client_credentials.");
  }
}

function s256(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}

async function issueFromFamily(
  db: Db,
  client: OAuthClient,
  userId: string,
  grantId: string,
  family: { id: string; resource: TokenResource },
  scopes: string[],
): Promise<TokenResponse> {
  const familyId = family.id;
  const refreshToken = generateToken("refresh");
  await db.insert(oauthRefreshTokens).values({
    tokenHash: sha256Hex(refreshToken),
    familyId,
    expiresAt: new Date(Date.now() + REFRESH_TOKEN_TTL_S * 1000),
  });
  const access = await issueAccessToken(db, { subject: userId, clientId: client.clientId, scopes, grantId, familyId, resource: family.resource });
  return { access_token: access.token, token_type: "Bearer", expires_in: access.expiresIn, refresh_token: refreshToken, scope: scopes.join(" ") };
}

async function exchangeCode(db: Db, client: OAuthClient, form: URLSearchParams, resource: TokenResource | undefined): Promise<TokenResponse> {
  const code = form.get("code");
  const verifier = form.get("code_verifier");
  if (!code) throw new OAuthError("invalid_request", "code is required.");
  if (!verifier) throw new OAuthError("invalid_request", "code_verifier is required (PKCE).");
  // Every authorization request here names its redirect_uri, so the exchange must name it too
  // (RFC 6749 §4.1.3): a request without it is malformed, and leaves the code unused.
  if (!form.get("redirect_uri")) throw new OAuthError("invalid_request", "redirect_uri is required: the one the authorization request named.");
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) throw new OAuthError("invalid_request", "code_verifier must be 43 to 128 unreserved characters.");
  const codeHash = sha256Hex(code);

  // The claim and what it issues commit together: a concurrent replay waits on the code's row
  // lock until this transaction ends, then finds the family it must revoke.
  type Outcome = { kind: "issued"; tokens: TokenResponse } | { kind: "refused"; reason: string } | { kind: "replayed" } | { kind: "wrong_target"; error: OAuthError };
  const outcome = await db.transaction(async (tx): Promise<Outcome> => {
    // Single use by compare-and-swap: exactly one exchange can flip used_at.
    const [claimed] = await tx
      .update(oauthCodes)
      .set({ usedAt: new Date() })
      .where(and(eq(oauthCodes.codeHash, codeHash), isNull(oauthCodes.usedAt)))
      .returning();
    if (!claimed) return { kind: "replayed" };
    // A refused exchange still uses the code up: it is returned, not thrown, so the claim commits.
    if (claimed.clientId !== client.clientId) return { kind: "refused", reason: "The authorization code was issued to another client." };
    if (claimed.expiresAt.getTime() < Date.now()) return { kind: "refused", reason: "The authorization code has expired." };
    if (form.get("redirect_uri") !== claimed.redirectUri) return { kind: "refused", reason: "redirect_uri does not match the authorization request." };
    if (!safeEqual(s256(verifier), claimed.codeChallenge)) return { kind: "refused", reason: "code_verifier does not match the code_challenge." };
    try {
      checkSameResource(resource, claimed.resource);
    } catch (e) {
      return { kind: "wrong_target", error: e as OAuthError };
    }
    const [grant] = await tx
      .select()
      .from(oauthGrants)
      .where(and(eq(oauthGrants.id, claimed.grantId), isNull(oauthGrants.revokedAt)));
    if (!grant) return { kind: "refused", reason: "The athlete has since disconnected the app." };
    const familyId = newId("fam");
    await tx.insert(oauthTokenFamilies).values({ id: familyId, grantId: grant.id, scopes: claimed.scopes, resource: claimed.resource });
    await tx.update(oauthCodes).set({ familyId }).where(eq(oauthCodes.codeHash, codeHash));
    return { kind: "issued", tokens: await issueFromFamily(tx, client, grant.userId, grant.id, { id: familyId, resource: claimed.resource }, claimed.scopes) };
  });
  if (outcome.kind === "issued") return outcome.tokens;
  if (outcome.kind === "wrong_target") throw outcome.error;
  if (outcome.kind === "refused") throw invalidGrant(outcome.reason);

  const [replayed] = await db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, codeHash));
  if (replayed?.familyId && replayed.clientId === client.clientId) {
    // RFC 6749 §4.1.2 / RFC 9700 §4.5: a replayed code revokes the tokens it issued. Only when the
    // app it was issued to sends it again: anyone may name a public client, and a code seen in a
    // log must not let another client end an app's grant (as RFC 7009 §2.2 leaves another
    // client's token alone, and a refresh token sent by another client revokes nothing).
    await db.update(oauthTokenFamilies).set({ revokedAt: new Date() }).where(eq(oauthTokenFamilies.id, replayed.familyId));
  }
  throw invalidGrant("The authorization code is invalid, expired or already used.");
}

async function refresh(db: Db, client: OAuthClient, form: URLSearchParams, resource: TokenResource | undefined): Promise<TokenResponse> {
  const token = form.get("refresh_token");
  if (!token) throw new OAuthError("invalid_request", "refresh_token is required.");
  if (!isWellFormedToken(token, "refresh")) throw invalidGrant("The refresh token is invalid.");
  const tokenHash = sha256Hex(token);
  const [row] = await db
    .select({ token: oauthRefreshTokens, family: oauthTokenFamilies, grant: oauthGrants })
    .from(oauthRefreshTokens)
    .innerJoin(oauthTokenFamilies, eq(oauthTokenFamilies.id, oauthRefreshTokens.familyId))
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokenFamilies.grantId))
    .where(eq(oauthRefreshTokens.tokenHash, tokenHash));
  if (!row || row.grant.clientId !== client.clientId) throw invalidGrant("The refresh token is invalid.");
  if (row.grant.revokedAt || row.family.revokedAt) throw invalidGrant("The refresh token was revoked.");
  if (row.token.expiresAt.getTime() < Date.now()) throw invalidGrant("The refresh token has expired.");
  checkSameResource(resource, row.family.resource);

  let scopes = row.family.scopes;
  const asked = form.get("scope");
  if (asked !== null) {
    const narrowed = [...new Set(asked.split(" ").filter(Boolean))];
    if (!narrowed.length || narrowed.some((s) => !isScope(s) || !row.family.scopes.includes(s))) {
      throw new OAuthError("invalid_scope", "A refresh may only narrow the scopes originally granted.");
    }
    scopes = narrowed;
  }

  // Rotation by compare-and-swap in one statement: the loser of a race is a reuse. The swap and
  // the new pair commit together, as the code exchange does: if issuing fails, the swap rolls
  // back and the client's retry with the same refresh token is a first use, not a reuse. A
  // concurrent use waits on the row lock until this transaction ends, then sees the swap.
  const tokens = await db.transaction(async (tx) => {
    const [rotated] = await tx
      .update(oauthRefreshTokens)
      .set({ rotatedAt: new Date() })
      .where(and(eq(oauthRefreshTokens.tokenHash, tokenHash), isNull(oauthRefreshTokens.rotatedAt)))
      .returning({ tokenHash: oauthRefreshTokens.tokenHash });
    if (!rotated) return undefined;
    return issueFromFamily(tx, client, row.grant.userId, row.grant.id, row.family, scopes);
  });
  if (tokens) return tokens;
  // RFC 9700 §4.14.2: reuse of a rotated refresh token means it leaked; end the grant, as a
  // disconnect does: the app is told (athlete.deauthorized) and its waiting deliveries withdrawn.
  await inTransaction(db, (tx) => endGrant(tx, row.grant.id, row.grant.userId));
  throw invalidGrant("The refresh token was already used; the authorization has been revoked.");
}

async function clientCredentials(db: Db, client: OAuthClient, form: URLSearchParams): Promise<TokenResponse> {
  if (client.kind !== "confidential") {
    throw new OAuthError("unauthorized_client", "Only confidential clients may use the client_credentials grant.");
  }
  const asked = (form.get("scope") ?? "").split(" ").filter(Boolean);
  if (asked.length) {
    throw new OAuthError("invalid_scope", "A client-credentials token acts as the app and carries no athlete scope.");
  }
  const access = await issueAppAccessToken(db, client);
  return { access_token: access.token, token_type: "Bearer", expires_in: access.expiresIn };
}
