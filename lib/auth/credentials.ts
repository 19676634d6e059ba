import "server-only";
import type { Db } from "../db/client";
import { consumeRateLimit } from "../http/rate-limit";
import { verifyCredentials, type Person } from "../people/people";
import { SignInInput } from "../people/schemas";
import { releaseSignInAttempt, reserveSignInAttempt } from "./signin-guard";

export type SignInRefusal = "invalid_credentials" | "too_many_attempts" | "rate_limited";

export type SignInOutcome = { ok: true; person: Person } | { ok: false; reason: SignInRefusal; retryAfterS?: number };

/**
 * Decides one sign-in attempt, in the order that keeps guessing expensive for the guesser and
 * cheap for us: the source address's window (every attempt counts, CONTRACT §10's windows), then
 * a place among the email's ten (taken before the password is verified, so parallel guesses
 * cannot all slip past a check), and only then the argon2 verification. A success gives its place
 * back. For well-formed input, `invalid_credentials` is the one refusal that means a password
 * was verified.
 */
export async function checkSignIn(db: Db, raw: unknown, address: string, nowMs = Date.now()): Promise<SignInOutcome> {
  const source = await consumeRateLimit(db, `signin-addr:${address}`, nowMs);
  if (source.exceeded) return { ok: false, reason: "rate_limited", retryAfterS: source.exceeded.resetS };
  const parsed = SignInInput.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: "invalid_credentials" };
  const { email, password } = parsed.data;
  const place = await reserveSignInAttempt(db, email, nowMs);
  if (!place.ok) return { ok: false, reason: "too_many_attempts", retryAfterS: place.retryAfterS };
  const person = await verifyCredentials(db, email, password);
  if (!person) return { ok: false, reason: "invalid_credentials" };
  await releaseSignInAttempt(db, place.reservation);
  return { ok: true, person };
}
