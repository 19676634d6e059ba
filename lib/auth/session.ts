import "server-only";
import { getToken } from "next-auth/jwt";
import { authSecret } from "../secrets";

// Auth.js names its session cookie by the scheme it was served over (`__Secure-` over https).
// Either is read: only this service's secret can have made a value that decodes.
const SESSION_COOKIES = ["__Secure-authjs.session-token", "authjs.session-token"] as const;

/**
 * The signed-in person's id from the request's own session cookie, or null: what `auth()` reads
 * (the same cookie, secret and salt), taken from the request instead of Next.js's request scope,
 * so a route handler decides the same way under any server. Only the cookie counts; a session
 * token in an Authorization header is not accepted.
 */
export async function sessionUserId(req: Request): Promise<string | null> {
  const cookie = req.headers.get("cookie");
  if (!cookie) return null;
  for (const name of SESSION_COOKIES) {
    const token = await getToken({
      req: { headers: { cookie } },
      secret: authSecret(),
      cookieName: name,
      salt: name,
      secureCookie: name.startsWith("__Secure-"),
    });
    if (typeof token?.uid === "string") return token.uid;
  }
  return null;
}
