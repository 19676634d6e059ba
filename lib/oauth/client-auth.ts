import "server-only";
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { oauthClients } from "../db/schema";
import { safeEqual, sha256Hex } from "../crypto/random";
import { getEnv } from "../env";
import { isStorableText } from "../http/validation";
import { OAuthError } from "./errors";
import { findClientCached, type OAuthClient } from "./client-cache";
import { MAX_CLIENT_ID_CHARS } from "./client-metadata";

export type { OAuthClient };

/** What an unknown client's secret is compared against, so timing does not tell them apart. */
const NO_SUCH_CLIENT_HASH = sha256Hex("no-such-client");

/**
 * RFC 6749 §5.2: 401, with a `Basic` challenge when the client authenticated with the
 * Authorization header (there it must be the scheme the client used). Not otherwise: the
 * challenge is optional then, and a browser answers one by showing its own password prompt over
 * the page that called (a public client's fetch, /docs's Authorize); the description says what to send.
 */
function invalidClient(description: string, { usedAuthorization }: { usedAuthorization: boolean }): OAuthError {
  const challenge = usedAuthorization ? { "WWW-Authenticate": `Basic realm="${getEnv().baseUrl}", charset="UTF-8"` } : undefined;
  return new OAuthError("invalid_client", description, 401, challenge);
}

/** HTTP Basic credentials, each part form-urlencoded before encoding (RFC 6749 §2.3.1). */
export function decodeBasic(header: string): { id: string; secret: string } | null {
  const m = /^Basic +([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
  const i = decoded.indexOf(":");
  if (i < 0) return null;
  try {
    // RFC 6749 §2.3.1: both parts are form-urlencoded before encoding.
    return { id: decodeURIComponent(decoded.slice(0, i).replace(/\+/g, " ")), secret: decodeURIComponent(decoded.slice(i + 1).replace(/\+/g, " ")) };
  } catch {
    return null;
  }
}

export async function findClient(db: Db, clientId: string): Promise<OAuthClient | undefined> {
  // No registered id holds a NUL or a lone surrogate (and PostgreSQL would refuse the first).
  if (!clientId || clientId.length > MAX_CLIENT_ID_CHARS || !isStorableText(clientId)) return undefined;
  const [c] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId)).limit(1);
  return c;
}

/**
 * Authenticates the client at the token and revocation endpoints: HTTP Basic for confidential
 * clients (`client_secret_basic`), `client_id` alone for public ones (`none`).
 * @see RFC 6749 §2.3.1, RFC 7591 §2 (token_endpoint_auth_method)
 */
export async function authenticateClient(db: Db, authorization: string | null, form: URLSearchParams): Promise<OAuthClient> {
  const bodyId = form.get("client_id");
  if (form.has("client_secret")) throw invalidClient("Send the client secret with HTTP Basic authentication, not in the body.", { usedAuthorization: authorization !== null });
  if (authorization) {
    const basic = decodeBasic(authorization);
    if (!basic) throw invalidClient("The Authorization header is not valid HTTP Basic.", { usedAuthorization: true });
    if (bodyId !== null && bodyId !== basic.id) throw new OAuthError("invalid_request", "client_id in the body differs from the authenticated client.");
    const client = basic.id && basic.id.length <= MAX_CLIENT_ID_CHARS ? await findClientCached(db, basic.id) : undefined;
    // Client secrets are 190 random bits (`aas_cs_…`), so a fast hash is the right one: no
    // dictionary to slow down. Compared in constant time; unknown clients against a dummy.
    const ok = safeEqual(client?.secretHash ?? NO_SUCH_CLIENT_HASH, sha256Hex(basic.secret));
    if (!client || client.kind !== "confidential" || !ok) throw invalidClient("Client authentication failed.", { usedAuthorization: true });
    return client;
  }
  if (!bodyId) throw invalidClient("Authenticate the client: HTTP Basic for confidential clients, client_id for public ones.", { usedAuthorization: false });
  const client = bodyId.length <= MAX_CLIENT_ID_CHARS ? await findClientCached(db, bodyId) : undefined;
  if (!client) throw invalidClient("Unknown client.", { usedAuthorization: false });
  if (client.kind === "confidential") throw invalidClient("This client is confidential: authenticate with HTTP Basic.", { usedAuthorization: false });
  return client;
}
