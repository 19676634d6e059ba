import "server-only";
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { oauthGrants, oauthRefreshTokens, oauthTokenFamilies } from "../db/schema";
import { sha256Hex } from "../crypto/random";
import { ApiError } from "../http/errors";
import { isWellFormedToken } from "../tokens/format";
import { OAuthError } from "./errors";
import { authenticateClient } from "./client-auth";
import { looksLikeJwt, verifyAccessToken } from "./access-token";

/**
 * POST /oauth/revoke. Revoking a refresh token or an athlete access token revokes its token
 * family: the refresh token and every access token issued with it (RFC 7009 §2.1 allows this).
 * Unknown or foreign tokens are answered 200, as the RFC requires.
 *
 * `prove` is told the client once the request proved it: a confidential client's secret, or a
 * public client's own token found (an unknown or another client's token proves nothing).
 * @see RFC 7009 §2
 */
export async function revokeToken(
  db: Db,
  authorization: string | null,
  form: URLSearchParams,
  prove: (clientId: string) => void = () => {},
): Promise<void> {
  const client = await authenticateClient(db, authorization, form);
  if (client.kind === "confidential") prove(client.clientId);
  const token = form.get("token");
  if (!token) throw new OAuthError("invalid_request", "token is required.");

  let familyId: string | undefined;
  if (isWellFormedToken(token, "refresh")) {
    const [row] = await db
      .select({ familyId: oauthRefreshTokens.familyId, clientId: oauthGrants.clientId })
      .from(oauthRefreshTokens)
      .innerJoin(oauthTokenFamilies, eq(oauthTokenFamilies.id, oauthRefreshTokens.familyId))
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokenFamilies.grantId))
      .where(eq(oauthRefreshTokens.tokenHash, sha256Hex(token)));
    if (row?.clientId === client.clientId) familyId = row.familyId;
  } else if (looksLikeJwt(token)) {
    try {
      const claims = await verifyAccessToken(db, token);
      if (claims.client_id === client.clientId) {
        if (!claims.fam) {
          throw new OAuthError("unsupported_token_type", "Client-credentials tokens cannot be revoked; they expire within the hour.");
        }
        familyId = claims.fam;
      }
    } catch (err) {
      if (!(err instanceof ApiError)) throw err; // invalid or expired: nothing to revoke
    }
  }
  if (!familyId) return;
  prove(client.clientId);
  await db.update(oauthTokenFamilies).set({ revokedAt: new Date() }).where(eq(oauthTokenFamilies.id, familyId));
}
