import { isDatabaseUnavailable } from "../http/db-errors";
import { SLICE_MS } from "./signin-guard";

/**
 * "Wait 12 minutes": a wait in words, in whole minutes rounded up so that a person who waits
 * that long is let in. `slackS` is how long the wait may run past the limit's own span for a
 * reason of bookkeeping: the per-email guard counts in 10-second slices, so its 15-minute
 * refusal answers a Retry-After of up to 910 s, which is still the 15 minutes CONTRACT §10 names.
 */
export function waitText(retryAfterS: number | undefined, otherwise: string, slackS = 0): string {
  if (retryAfterS === undefined) return otherwise;
  const minutes = Math.ceil(Math.max(0, retryAfterS - slackS) / 60);
  return minutes <= 1 ? "Wait a minute" : `Wait ${minutes} minutes`;
}

/** What the sign-in form says when Auth.js refused a sign-in with `code`. */
export function signInRefusalMessage(code: string, retryAfterS: number | undefined): string {
  switch (code) {
    case "too_many_attempts":
      return `Too many failed attempts for this email. ${waitText(retryAfterS, "Wait 15 minutes", SLICE_MS / 1000)} and try again.`;
    case "rate_limited":
      return `Too many sign-in attempts from your network. ${waitText(retryAfterS, "Wait a few minutes")} and try again.`;
    default:
      return "That email and password do not match an account.";
  }
}

/** What the sign-in form says while the database cannot be reached (the API answers 503 then). */
export const SIGN_IN_UNAVAILABLE = "The service is unavailable right now. Try again shortly.";

/**
 * What the sign-in form says when Auth.js's `signIn` failed with `err` (an AuthError), or
 * undefined for a failure that is the server's to report (the caller throws it on). Only a
 * refusal from `authorize` (CredentialsSignin, with its `code`) is about the email and password.
 * Anything else `authorize` throws, Auth.js wraps as a CallbackRouteError whose `cause.err` is
 * the error thrown: a database that cannot be reached is told as the service unavailable.
 */
export function signInFailureMessage(err: { type?: unknown; code?: unknown; cause?: unknown }, retryAfterS: number | undefined): string | undefined {
  if (err.type === "CredentialsSignin") return signInRefusalMessage(typeof err.code === "string" ? err.code : "", retryAfterS);
  const thrown = (err.cause as { err?: unknown } | undefined)?.err;
  if (isDatabaseUnavailable(thrown)) return SIGN_IN_UNAVAILABLE;
  return undefined;
}

/**
 * What the sign-in page says when Auth.js sent the browser there with `?error=<type>&code=<code>`
 * (its error page is the sign-in page: `AUTH_PAGES`), or null for nothing to say: an address
 * Auth.js does not serve arrives as `Configuration`, and the person has only to sign in.
 */
export function signInErrorMessage(type: string | undefined, code: string | undefined): string | null {
  switch (type) {
    case "CredentialsSignin":
      return signInRefusalMessage(code ?? "", undefined);
    case "MissingCSRF":
      return "The sign-in form had expired. Sign in again.";
    default:
      return null;
  }
}
