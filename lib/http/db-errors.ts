import { ApiError } from "./errors";

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "EPIPE",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  // The server answers but will not let the service in: its database is gone (dropped, being
  // restored, a failover's replica not yet promoted) or its role or password is refused (rotated
  // credentials). Nothing in the request can change that: 503 with Retry-After, as an outage, not
  // 500 as if the request had found a fault.
  "3D000", // invalid_catalog_name
  "28000", // invalid_authorization_specification
  "28P01", // invalid_password
]);

/** The `Retry-After` of every 503 the service answers (the database unreachable, the service busy), in seconds. */
export const RETRY_AFTER_S = "5";

/** The problem answering a request while the database cannot be reached: 503, retry in 5 s. */
export function databaseUnavailableError(): ApiError {
  return new ApiError("service_unavailable", "The database cannot be reached. Retry shortly.", { headers: { "Retry-After": RETRY_AFTER_S } });
}

/** True when `err` (or its cause) says the database could not be reached, not that a query was wrong. */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (CONNECTION_CODES.has(code) || code.startsWith("08"))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * True when `err` says of itself that the same request can succeed shortly (`retriable: true`):
 * the service was too busy, nothing is wrong with the request (the file workers' full queue,
 * FileWorkBusyError). Such an error answers 503 with `Retry-After`, never 500.
 */
export function isRetriable(err: unknown): err is Error & { retriable: true } {
  return err instanceof Error && (err as { retriable?: unknown }).retriable === true;
}
