/**
 * The API's one error type. `code` is a closed union; its status and title come from one
 * table, and every code has a page at `{base_url}/problems/{code}` (CONTRACT §3).
 */
export const PROBLEM_CODES = {
  invalid_request: { status: 400, title: "Invalid request", about: "The request is malformed: its JSON, a parameter or a field could not be read. The `errors` member lists each bad field." },
  invalid_date: { status: 400, title: "Invalid date", about: "A date or local time could not be parsed, or names a day that does not exist (2026-02-30). Dates are `YYYY-MM-DD`; local times `YYYY-MM-DDTHH:MM:SS` with no offset." },
  invalid_enum_value: { status: 400, title: "Unknown value", about: "A parameter or field holds a value outside its documented set, such as an unknown `sport_type`." },
  invalid_parameter_combination: { status: 400, title: "Parameters cannot be combined", about: "The parameters are each valid but cannot be satisfied together, such as an `end` before `start`." },
  invalid_cursor: { status: 400, title: "Invalid cursor", about: "The `cursor` was not one this API returned. Start again from the first page." },
  webhook_verification_failed: { status: 400, title: "Webhook verification failed", about: "The subscription endpoint did not complete the verification handshake." },
  invalid_webhook_url: { status: 400, title: "Invalid webhook URL", about: "The webhook URL is not an allowed `https://` address." },
  unsupported_file_type: { status: 400, title: "Unsupported file type", about: "The uploaded file is not FIT, GPX or TCX (each optionally gzip-compressed). The kind is recognised from the content, not the file name." },
  token_missing: { status: 401, title: "Token missing", about: "No bearer token was sent. Send `Authorization: Bearer <token>`." },
  token_invalid: { status: 401, title: "Token invalid", about: "The bearer token is not one this API issued, or it is malformed." },
  token_expired: { status: 401, title: "Token expired", about: "The token's lifetime has ended. Create a new personal access token, or refresh the OAuth token." },
  token_revoked: { status: 401, title: "Token revoked", about: "The token was revoked by its owner, or the athlete disconnected the app." },
  subscription_required: { status: 402, title: "Subscription required", about: "The account the token belongs to has no active subscription or trial." },
  insufficient_scope: { status: 403, title: "Insufficient scope", about: "The token lacks the scope this endpoint requires; the `WWW-Authenticate` header names it." },
  athlete_not_reachable: { status: 403, title: "Athlete not reachable", about: "The token may not act on the athlete named. A token reaches its own athlete and, for coaches and team admins, the active members of their teams." },
  team_not_reachable: { status: 403, title: "Team not reachable", about: "The token's owner is not a coach or admin of the team named." },
  client_credentials_required: { status: 403, title: "Client credentials required", about: "`/v1/app/*` endpoints take only a token from the client-credentials grant." },
  client_credentials_not_allowed: { status: 403, title: "Client credentials not allowed", about: "A client-credentials token acts as the app itself and cannot read athlete data." },
  not_found: { status: 404, title: "Not found", about: "No such resource, or it is not visible to this token; the two cases are deliberately indistinguishable." },
  method_not_allowed: { status: 405, title: "Method not allowed", about: "The path exists but does not serve this method; the `Allow` header lists those it does." },
  conflict: { status: 409, title: "Conflict", about: "The request conflicts with the current state of the resource." },
  idempotency_key_in_use: { status: 409, title: "Idempotency key in use", about: "Another request with the same `Idempotency-Key` is still being processed. Retry after it completes." },
  payload_too_large: { status: 413, title: "Payload too large", about: "JSON request bodies are limited to 1 MiB; uploaded files to 25 MiB, after decompression too." },
  idempotency_key_reused: { status: 422, title: "Idempotency key reused", about: "This `Idempotency-Key` was already used with a different request body. Use a new key for a new request." },
  rate_limited: { status: 429, title: "Rate limited", about: "A rate limit was exceeded. Retry after the number of seconds in `Retry-After`; the `RateLimit` headers show the windows." },
  internal_error: { status: 500, title: "Internal error", about: "The service failed. The `trace_id` member identifies the failure in the service's log." },
  service_unavailable: { status: 503, title: "Service unavailable", about: "The service cannot take the request right now: the database cannot be reached, too many large uploads are arriving at once, or the file workers have too much waiting. Retry after the number of seconds in `Retry-After`." },
} as const satisfies Record<string, { status: number; title: string; about: string }>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

export type FieldError = { field: string; code: ProblemCode; detail: string };

export class ApiError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly errors?: FieldError[];
  readonly headers: Record<string, string>;
  /** RFC 9457 §3.2 extension members (e.g. a failed webhook handshake's `handshake`). */
  readonly extensions?: Record<string, unknown>;

  constructor(
    code: ProblemCode,
    detail: string,
    opts: { errors?: FieldError[]; headers?: Record<string, string>; extensions?: Record<string, unknown> } = {},
  ) {
    super(detail);
    this.name = "ApiError";
    this.code = code;
    this.status = PROBLEM_CODES[code].status;
    this.errors = opts.errors;
    this.headers = opts.headers ?? {};
    this.extensions = opts.extensions;
  }
}

export function isProblemCode(code: string): code is ProblemCode {
  return Object.hasOwn(PROBLEM_CODES, code);
}
