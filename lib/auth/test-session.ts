import { encode } from "next-auth/jwt";
import { getDb } from "../db/client";
import { authSecret } from "../secrets";
import { startConsoleSession } from "./console-sessions";

/**
 * A `Cookie` header signed in as `userId`, as Auth.js writes it after a sign-in over http, with
 * a console session of its own (tests: the console's routes read this cookie, and Auth.js
 * itself needs Next.js to run).
 */
export async function sessionCookieFor(userId: string): Promise<string> {
  const name = "authjs.session-token";
  const sid = await startConsoleSession(await getDb(), userId);
  const value = await encode({ token: { sub: userId, uid: userId, sid }, secret: authSecret(), salt: name, maxAge: 3600 });
  return `${name}=${value}`;
}
