import "server-only";
import { getToken } from "next-auth/jwt";
import { getEnv } from "../env";
import { authSecret } from "../secrets";

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
 * token in an Authorization header is not accepted.
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
  return typeof token?.uid === "string" ? token.uid : null;
}
