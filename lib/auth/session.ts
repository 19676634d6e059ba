import "server-only";
import { getToken } from "next-auth/jwt";
import { getDb } from "../db/client";
import { getEnv } from "../env";
import { authSecret } from "../secrets";
import { consoleSessionHolds, endConsoleSession } from "./console-sessions";

/**
 * Whether sessions live in a `__Host-` cookie: when the service is served over https
 * (BASE_URL), whatever a proxy's headers say. Only that cookie is then read: a browser takes a
 * `__Host-` cookie only from an https page of this very host (`Secure`, `Path=/`, no `Domain`),
 * so no other origin, a sibling subdomain included, can plant a session of its own choosing in
 * place of the person's (a `__Secure-` cookie may carry `Domain=` the parent domain).
 */
export function secureSessionCookie(): boolean {
  return getEnv().baseUrl.startsWith("https://");
}

const sessionCookieName = () => (secureSessionCookie() ? "__Host-authjs.session-token" : "authjs.session-token");

/** Auth.js's `cookies` setting for the session: the name read here, and what `__Host-` requires. */
export function sessionCookieConfig() {
  return {
    sessionToken: {
      name: sessionCookieName(),
      options: { httpOnly: true, sameSite: "lax" as const, path: "/", secure: secureSessionCookie() },
    },
  };
}

/** The session token in a `Cookie` header, as Auth.js wrote it (its cookie, secret and salt), or null. */
async function sessionToken(cookie: string | null): Promise<Record<string, unknown> | null> {
  if (!cookie) return null;
  const name = sessionCookieName();
  return getToken({
    req: { headers: { cookie } },
    secret: authSecret(),
    cookieName: name,
    salt: name,
    secureCookie: secureSessionCookie(),
  });
}

/**
 * The signed-in person's id from the request's own session cookie, or null: what `auth()` reads
 * (the same cookie, secret and salt), taken from the request instead of Next.js's request scope,
 * so a route handler decides the same way under any server. Only the cookie counts; a session
 * token in an Authorization header is not accepted. The cookie signs its person in only while
 * its console session holds (not signed out: lib/auth/console-sessions.ts).
 */
export async function sessionUserId(req: Request): Promise<string | null> {
  const token = await sessionToken(req.headers.get("cookie"));
  if (typeof token?.uid !== "string") return null;
  return (await consoleSessionHolds(await getDb(), token.uid, token.sid)) ? token.uid : null;
}

/**
 * Ends the console session the `Cookie` header's session names, before Auth.js clears the
 * cookie (the sign-out action). Throws when the database does not answer: Auth.js's own
 * sign-out event only logs a failure and clears the cookie all the same, which would leave a
 * copy of it signed in.
 */
export async function endSessionOf(cookie: string | null): Promise<void> {
  const token = await sessionToken(cookie);
  if (token) await endConsoleSession(await getDb(), token.sid);
}
