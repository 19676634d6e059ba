import "server-only";
import type { Db } from "../db/client";
import { getDb } from "../db/client";
import { getEnv } from "../env";
import { log } from "../log";
import { isDatabaseUnavailable } from "../http/db-errors";
import { clientAddress } from "../http/client-address";
import { OAuthError, oauthErrorResponse } from "./errors";
import { decodeBasic } from "./client-auth";
import { consumeTokenEndpointLimit } from "./token-limit";

const MAX_FORM_BYTES = 64 * 1024;

async function readForm(req: Request): Promise<URLSearchParams> {
  const type = req.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new OAuthError("invalid_request", "The body must be application/x-www-form-urlencoded.");
  }
  const text = await req.text();
  if (Buffer.byteLength(text) > MAX_FORM_BYTES) throw new OAuthError("invalid_request", "The body is too large.");
  return new URLSearchParams(text);
}

/**
 * The claimed client id, before authentication: the key of the per-client limit. Decoded as
 * authentication decodes it, so spelling one id differently cannot open a second window.
 */
function claimedClientId(req: Request, form: URLSearchParams): string {
  const authorization = req.headers.get("authorization");
  const id = authorization ? (decodeBasic(authorization)?.id ?? "") : (form.get("client_id") ?? "");
  return id.slice(0, 100);
}

/**
 * The OAuth endpoints' adapter: form parsing, the per-client and per-address limit of
 * CONTRACT §10, RFC 6749 §5.2 errors, never a problem document.
 */
export function oauthEndpoint(fn: (db: Db, req: Request, form: URLSearchParams) => Promise<Response>) {
  return async (req: Request): Promise<Response> => {
    try {
      const form = await readForm(req);
      const db = await getDb();
      const limit = getEnv().rateLimitOAuthToken;
      const over = consumeTokenEndpointLimit(db, [
        { bucket: `oauth-token-client:${claimedClientId(req, form)}`, windowS: 60, limit },
        { bucket: `oauth-token-addr:${clientAddress(req)}`, windowS: 60, limit },
      ]);
      if (over) {
        return oauthErrorResponse(
          new OAuthError("slow_down", `Too many requests; retry in ${over.retryAfterS} s.`, 429, { "Retry-After": String(over.retryAfterS) }),
        );
      }
      return await fn(db, req, form);
    } catch (err) {
      if (err instanceof OAuthError) return oauthErrorResponse(err);
      if (isDatabaseUnavailable(err)) {
        return oauthErrorResponse(new OAuthError("temporarily_unavailable", "The database cannot be reached.", 503, { "Retry-After": "5" }));
      }
      log.error("oauth endpoint failed", { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      return oauthErrorResponse(new OAuthError("server_error", "The authorization server failed.", 500));
    }
  };
}
