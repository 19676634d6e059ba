import { log } from "../log";

/**
 * Auth.js's own pages are the console's: its stock sign-in, sign-out and error pages (unstyled,
 * and a 500 "server configuration" page for an address it does not serve, such as GET
 * /api/auth/signin/credentials) are never shown. An error lands on the sign-in page with
 * Auth.js's `?error=` type, which that page puts in words (`signInErrorMessage`).
 */
export const AUTH_PAGES = { signIn: "/signin", signOut: "/signout", error: "/signin", verifyRequest: "/signin" } as const;

/**
 * Errors Auth.js reports that are the caller's doing, not the server's, by the `type` Auth.js
 * names them with: a refused password (CredentialsSignin and its subclasses), and an address or
 * method under /api/auth that Auth.js does not serve (UnknownAction: GET
 * /api/auth/signin/credentials), a session cookie that does not decrypt (forged, cut, or sealed
 * under an AUTH_SECRET since changed: the caller is signed out), and a form without its CSRF
 * token. Each ends on the sign-in page or as signed out; none is worth a stack trace, and a
 * caller sending garbage cookies would otherwise write some 25 lines of log a request.
 */
const CALLERS_ERRORS: ReadonlySet<string> = new Set(["CredentialsSignin", "UnknownAction", "JWTSessionError", "MissingCSRF"]);

/**
 * Auth.js's `logger.error`: the server's errors as one log line (lib/log: one JSON object a
 * line), naming the error and what caused it; the caller's, not at all. Auth.js wraps what its
 * callbacks throw (a database that cannot be reached, in `authorize`) as a CallbackRouteError
 * whose `cause` is `{ err, ...}`: that `err` is the cause named.
 */
export function logAuthError(error: Error): void {
  const type = (error as { type?: unknown }).type;
  if (typeof type === "string" && CALLERS_ERRORS.has(type)) return;
  const fields: Record<string, unknown> = { error: `${error.name}: ${error.message}` };
  const cause = causeText(error.cause);
  if (cause) fields.cause = cause;
  log.error("Auth.js error", fields);
}

/** An error's cause in words, with the causes under it: `Name: message; Name: message`. */
function causeText(cause: unknown): string | undefined {
  const parts: string[] = [];
  let e: unknown = cause;
  for (let depth = 0; e && depth < 4; depth++) {
    if (!(e instanceof Error)) {
      const wrapped = (e as { err?: unknown }).err;
      if (wrapped instanceof Error) e = wrapped;
      else {
        if (typeof e !== "object") parts.push(String(e));
        break;
      }
    }
    const err = e as Error;
    parts.push(`${err.name}: ${err.message}`);
    e = err.cause;
  }
  return parts.length ? parts.join("; ") : undefined;
}
