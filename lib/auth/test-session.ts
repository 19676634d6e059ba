import { encode } from "next-auth/jwt";
import { authSecret } from "../secrets";

/**
 * A `Cookie` header signed in as `userId`, as Auth.js writes it after a sign-in over http
 * (tests: the console's routes read this cookie, and Auth.js itself needs Next.js to run).
 */
export async function sessionCookieFor(userId: string): Promise<string> {
  const name = "authjs.session-token";
  const value = await encode({ token: { sub: userId, uid: userId }, secret: authSecret(), salt: name, maxAge: 3600 });
  return `${name}=${value}`;
}
