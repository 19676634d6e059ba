import { isConnectionFailure, isLoginRefused } from "../db/connection-errors";
import { ApiError } from "./errors";

/** The `Retry-After` of every 503 the service answers (the database unreachable, the service busy), in seconds. */
export const RETRY_AFTER_S = "5";

/** The problem answering a request while the database cannot be reached: 503, retry in 5 s. */
export function databaseUnavailableError(): ApiError {
  return new ApiError("service_unavailable", "The database cannot be reached. Retry shortly.", { headers: { "Retry-After": RETRY_AFTER_S } });
}

/**
 * True when `err` (or its cause) says the database could not be reached, not that a query was
 * wrong: a connection failure, or the server refusing the service's login (its database gone,
 * its role or password refused: nothing in the request can change that, so 503 with
 * Retry-After, as an outage, not 500 as if the request had found a fault).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  return isConnectionFailure(err) || isLoginRefused(err);
}

/**
 * True when `err` says of itself that the same request can succeed shortly (`retriable: true`):
 * the service was too busy, nothing is wrong with the request (the file workers' full queue,
 * FileWorkBusyError). Such an error answers 503 with `Retry-After`, never 500.
 */
export function isRetriable(err: unknown): err is Error & { retriable: true } {
  return err instanceof Error && (err as { retriable?: unknown }).retriable === true;
}
