import "server-only";
import { getToken } from "next-auth/jwt";
import { getDb } from "../db/client";
import { getEnv } from "../env";
import { authSecret } from "../secrets";
import { consoleSessionHolds } from "./console-sessions";

/**
 * Whether sessions live in a `__Secure-` cookie: when the service is served over https
 * (BASE_URL), whatever a proxy's headers say. Only that cookie is then read: a browser takes a
 * `__Secure-` cookie only from an https page with `Secure` set, so a page of another (or an
 * insecure) origin cannot plant a session of its own choosing in place of the person's.
 */
export function secureSessionCookie(): boolean {
  return getEnv().baseUrl.startsWith("https://");
}

const sessionCookieName = () => (secureSessionCookie() ? "__Secure-authjs.session-token" : "authjs.session-token");

/**
 * The signed-in person's id from the request's own session cookie, or null: what `auth()` reads
 * (the same cookie, secret and salt), taken from the request instead of Next.js's request scope,
 * so a route handler decides the same way under any server. Only the cookie counts; a session
 * token in an Authorization header is not accepted. The cookie signs its person in only while
 * its console session holds (not signed out: lib/auth/console-sessions.ts).
 */
export async function sessionUserId(req: Request): Promise<string | null> {
  const cookie = req.headers.get("cookie");
  if (!cookie) return null;
  const name = sessionCookieName();
  const token = await getToken({
    req: { headers: { cookie } },
    secret: authSecret(),
    cookieName: name,
    salt: name,
    secureCookie: name.startsWith("__Secure-"),
  });
  if (typeof token?.uid !== "string") return null;
  return (await consoleSessionHolds(await getDb(), token.uid, token.sid)) ? token.uid : null;
}
