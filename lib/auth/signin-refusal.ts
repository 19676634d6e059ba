import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import type { SignInRefusal } from "./credentials";

/**
 * What refused a sign-in, and for how long, told to whoever asked Auth.js to sign someone in.
 * Auth.js turns a refusal inside `authorize` into a redirect carrying only its code (or, for a
 * server action, an error carrying only its code), so the wait CONTRACT §10's limits compute
 * would be lost on the way out; this carries it beside the request instead.
 */
export type Refusal = { reason: SignInRefusal; retryAfterS?: number };

const current = new AsyncLocalStorage<{ refusal?: Refusal }>();

/** Called where the refusal is decided (`authorize`). Outside `withRefusals`, nobody is told. */
export function noteRefusal(refusal: Refusal): void {
  const store = current.getStore();
  if (store) store.refusal = refusal;
}

/** Runs `signIn`, giving back what it answered and the refusal noted on the way, if any. */
export async function withRefusals<T>(run: () => Promise<T>): Promise<{ result: T; refusal?: Refusal }> {
  const store: { refusal?: Refusal } = {};
  const result = await current.run(store, run);
  return { result, refusal: store.refusal };
}

/**
 * The sign-in endpoint's answers to a refusal that is a limit (CONTRACT §10: "Both answer 429
 * with `Retry-After`"): a 429 with the wait in seconds and an OAuth-style error body, instead of
 * Auth.js's redirect to the sign-in page. A wrong password keeps Auth.js's own answer.
 */
export function answeringLimitsWith429<R extends Request>(handler: (req: R) => Promise<Response>): (req: R) => Promise<Response> {
  return async (req) => {
    const { result: res, refusal } = await withRefusals(() => handler(req));
    if (!refusal || refusal.reason === "invalid_credentials" || refusal.retryAfterS === undefined) return res;
    const headers = new Headers({ "Content-Type": "application/json", "Cache-Control": "no-store", "Retry-After": String(refusal.retryAfterS) });
    for (const cookie of res.headers.getSetCookie()) headers.append("Set-Cookie", cookie);
    const description =
      refusal.reason === "too_many_attempts"
        ? `Too many failed sign-ins for this email; retry in ${refusal.retryAfterS} s.`
        : `Too many sign-in attempts from this address; retry in ${refusal.retryAfterS} s.`;
    return new Response(JSON.stringify({ error: refusal.reason, error_description: description }), { status: 429, headers });
  };
}
