// What a database error says about the connection, for start-up (lib/db/client.ts: retried, not
// fatal) and for requests (lib/http/db-errors.ts: 503, not 500). One list for both.

/** Codes of a failure to reach the server or keep a connection to it, rather than an answer about a query (SQLSTATE class 08 too). */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, recovering)
  "53300", // too_many_connections
]);

/**
 * The server answers but will not let the service in: no such database (dropped, being restored,
 * a failover's replica not yet promoted), or its role or password refused (rotated credentials).
 */
export const LOGIN_REFUSED_CODES = ["3D000", "28000", "28P01"] as const;

/** The codes in `err` and its causes, outermost first (a drizzle query error carries the driver's in its cause). */
function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  return codes;
}

/** The first code in `err` or its causes. */
export function errorCode(err: unknown): string | undefined {
  return codesOf(err)[0];
}

/** True when `err` (or a cause) says the server could not be reached or the connection was lost. */
export function isConnectionFailure(err: unknown): boolean {
  return codesOf(err).some((code) => CONNECTION_CODES.has(code) || code.startsWith("08"));
}

/** True when `err` (or a cause) is the server refusing the service's login (LOGIN_REFUSED_CODES). */
export function isLoginRefused(err: unknown): boolean {
  return codesOf(err).some((code) => (LOGIN_REFUSED_CODES as readonly string[]).includes(code));
}
