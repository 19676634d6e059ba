import "server-only";
import type { Db } from "../db/client";
import { getDb } from "../db/client";
import { getEnv } from "../env";
import { log } from "../log";
import { isDatabaseUnavailable } from "../http/db-errors";
import { clientAddress } from "../http/client-address";
import { readBodyUpTo } from "../http/body";
import { requestStarted } from "../http/requests-first";
import { anyOriginAnswer } from "../http/cors";
import { oauthDatabaseUnavailable, OAuthError, oauthErrorResponse } from "./errors";
import { decodeBasic } from "./client-auth";
import { checkResourceRepeats } from "./authorize-checks";
import { MAX_CLIENT_ID_CHARS } from "./client-metadata";
import { tokenEndpointLimiter, type OverLimit, type TokenLimitWindow } from "./token-limit";

/** The largest form the OAuth endpoints read; a token request is a few hundred bytes. */
export const MAX_FORM_BYTES = 64 * 1024;

/**
 * A body over the limit: 413, in RFC 6749's error shape (the status says what happened to any
 * HTTP client, `invalid_request` is the OAuth code for it). It goes out at once; the rest of the
 * body is dropped meanwhile, to a bound (`dropRestAfterAnswer`).
 */
function tooLarge(): OAuthError {
  return new OAuthError("invalid_request", `The request body is larger than ${MAX_FORM_BYTES / 1024} KiB.`, 413);
}

/**
 * The form of an OAuth request, read from the stream and refused at the first byte past
 * MAX_FORM_BYTES: nothing beyond it is buffered, whatever the body declares or does not declare.
 */
async function readForm(req: Request): Promise<URLSearchParams> {
  const type = req.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new OAuthError("invalid_request", "The body must be application/x-www-form-urlencoded.");
  }
  const read = await readBodyUpTo(req, MAX_FORM_BYTES);
  if (read.tooLarge) throw tooLarge();
  if (read.cut) throw new OAuthError("invalid_request", read.detail);
  // RFC 6749 §3.1: "Parameters sent without a value MUST be treated as if they were omitted
  // from the request" (a public client's library that sends `client_secret=`, a refresh with `scope=`).
  const form = new URLSearchParams();
  for (const [k, v] of new URLSearchParams(read.bytes.toString("utf8"))) if (v !== "") form.append(k, v);
  return form;
}

/**
 * RFC 6749 §3.1: a parameter is sent at most once, at every OAuth form endpoint (RFC 7009 builds
 * on it), since which of two values to act on is unknown. `resource` is the one exception
 * (RFC 8707 §2): named again with the same value it is that one resource, with another value it
 * asks for a token for two, which is `invalid_target`.
 */
function checkNoRepeatedParams(form: URLSearchParams): void {
  // One pass: `getAll` per name scans the whole form each time, and a 64 KiB form holds some
  // 11,000 names, so that check held the thread 1.5 s per request, before any authentication.
  const seen = new Set<string>();
  const resources: string[] = [];
  for (const [key, value] of form) {
    if (key === "resource") resources.push(value);
    else if (seen.has(key)) throw new OAuthError("invalid_request", `${key} was sent more than once.`);
    else seen.add(key);
  }
  checkResourceRepeats(resources);
}

/**
 * The client id a request names, before authentication: the key of the per-client gate.
 * Decoded as authentication decodes it, so spelling one id differently cannot open a second
 * window.
 */
function claimedClientId(req: Request, form: URLSearchParams): string {
  const authorization = req.headers.get("authorization");
  return authorization ? (decodeBasic(authorization)?.id ?? "") : (form.get("client_id") ?? "");
}

/**
 * The longest client id a window's key holds: one past the longest a client may have, so no two
 * real ids share a window; the gate and the count cut an id alike, so both name one window.
 */
const WINDOW_ID_CHARS = MAX_CLIENT_ID_CHARS + 1;

/**
 * Called by a handler once the request has proved which client sent it: a confidential
 * client's valid secret, or for a public client (which has none) a grant that succeeded.
 */
export type ProveClient = (clientId: string) => void;

function slowDown(over: OverLimit): Response {
  return oauthErrorResponse(
    new OAuthError("slow_down", `Too many requests; retry in ${over.retryAfterS} s.`, 429, { "Retry-After": String(over.retryAfterS) }),
  );
}

/**
 * The OAuth endpoints' adapter: form parsing (each parameter once), the limits of CONTRACT §10,
 * RFC 6749 §5.2 errors, never a problem document.
 *
 * The limits count who a request proves to be, not who it claims to be. Every request counts
 * against its source address first; one that proves its client (see ProveClient) is moved to
 * that client's window. So failures (a wrong secret, an unknown client, an invalid code or
 * refresh token, a malformed body) all count against the address they came from, and naming a
 * public client's id, which anyone can read, cannot spend that client's window. A client whose
 * window its own proven requests filled is refused before any work, by the id it claims.
 */
export function oauthEndpoint(
  fn: (db: Db, req: Request, form: URLSearchParams, prove: ProveClient) => Promise<Response>,
  /**
   * The prefix of the proven client's window. Revocation has its own (`oauth-revoke-client`):
   * an app revoking many tokens (signing its users out) must not spend the window its token
   * requests need. Failures count against the one window per address that both share.
   */
  clientBucket = "oauth-token-client",
) {
  return async (req: Request): Promise<Response> => {
    // Counted while it is answered, so bulk work waits (lib/http/requests-first.ts).
    const answered = requestStarted();
    try {
      const db = await getDb();
      const limiter = tokenEndpointLimiter(db);
      const limit = getEnv().rateLimitOAuthToken;
      const startedAt = Date.now();
      const address: TokenLimitWindow = { bucket: `oauth-token-addr:${clientAddress(req)}`, windowS: 60, limit };
      const clientWindow = (clientId: string): TokenLimitWindow => ({ bucket: `${clientBucket}:${clientId.slice(0, WINDOW_ID_CHARS)}`, windowS: 60, limit });

      const overAddress = limiter.hit(address, startedAt);
      if (overAddress) return slowDown(overAddress);
      const form = await readForm(req);
      checkNoRepeatedParams(form);
      const claimed = claimedClientId(req, form);
      const overClient = claimed ? limiter.full(clientWindow(claimed), startedAt) : undefined;
      if (overClient) {
        // Refused for the window its client's own proven requests filled, before any work: no
        // guess was tried, so it is not the address's to count. Counted there, an app pressing
        // on past its own limit filled the window of every client behind the same address.
        limiter.add(address, -1, startedAt);
        return slowDown(overClient);
      }

      let proven = false;
      const prove: ProveClient = (clientId) => {
        if (proven) return;
        proven = true;
        limiter.add(address, -1, startedAt);
        limiter.hit(clientWindow(clientId), Date.now());
      };
      return await fn(db, req, form, prove);
    } catch (err) {
      if (err instanceof OAuthError) return oauthErrorResponse(err);
      if (isDatabaseUnavailable(err)) {
        return oauthErrorResponse(oauthDatabaseUnavailable());
      }
      log.error("oauth endpoint failed", { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      return oauthErrorResponse(new OAuthError("server_error", "The authorization server failed.", 500));
    } finally {
      answered();
    }
  };
}

/**
 * The other methods of an OAuth endpoint: 405 with `Allow: POST` and an RFC 6749 error body
 * (Next.js's own 405 has none), so an OAuth client reads it as it reads every other refusal.
 */
export function oauthMethodNotAllowed(req: Request): Response {
  // These endpoints answer every origin (their POST is wrapped in forAnyOrigin), so a browser
  // app that used the wrong method can read why too.
  return anyOriginAnswer(
    oauthErrorResponse(new OAuthError("invalid_request", `${req.method} is not served here; send the request with POST.`, 405, { Allow: "POST" })),
  );
}
