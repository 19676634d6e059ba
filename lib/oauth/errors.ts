import { RETRY_AFTER_S } from "../http/db-errors";
import { knownLengthResponse } from "../http/known-length";

/** RFC 6749 §5.2 and RFC 7009 §2.2.1 error codes, RFC 8707's invalid_target, and RFC 7591 §3.2.2's registration errors. */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "unsupported_token_type"
  | "invalid_scope"
  | "invalid_target"
  | "access_denied"
  | "server_error"
  | "temporarily_unavailable"
  | "slow_down"
  | "invalid_redirect_uri"
  | "invalid_client_metadata";

/** An OAuth error: its own family, never a problem document (STYLE §5). */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = "OAuthError";
  }
}

export function oauthErrorResponse(err: OAuthError): Response {
  return knownLengthResponse(JSON.stringify({ error: err.error, error_description: err.description }), {
    status: err.status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store", Pragma: "no-cache", ...err.headers },
  });
}

/** The OAuth endpoints' answer while the database cannot be reached: 503, retry shortly. */
export function oauthDatabaseUnavailable(): OAuthError {
  return new OAuthError("temporarily_unavailable", "The database cannot be reached.", 503, { "Retry-After": RETRY_AFTER_S });
}
