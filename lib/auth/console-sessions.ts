import { and, eq, gt, lt, sql } from "drizzle-orm";
import { randomBase62 } from "../crypto/random";
import type { Db } from "../db/client";
import { errorText, log } from "../log";
import { consoleSessions } from "../db/schema";

/** How long a console session lasts without use: the session cookie's own lifetime. */
export const CONSOLE_SESSION_DAYS = 30;

/**
 * A session's expiry is moved on when it was last set more than this long ago, so a person
 * using the console every day stays signed in without a write on every page.
 */
const SLIDE_AFTER_S = 86_400;

/**
 * Starts a console session for `userId` (a sign-in) and gives its id, which the session cookie
 * carries. The person's sessions that ended by expiry are removed on the way.
 */
export async function startConsoleSession(db: Db, userId: string): Promise<string> {
  const id = `ses_${randomBase62(32)}`;
  await db.delete(consoleSessions).where(and(eq(consoleSessions.userId, userId), lt(consoleSessions.expiresAt, sql`now()`)));
  await db.insert(consoleSessions).values({ id, userId, expiresAt: sql`now() + make_interval(days => ${CONSOLE_SESSION_DAYS})` });
  return id;
}

/**
 * Whether the session `sessionId` of `userId` still holds: not signed out and not expired.
 * A session in use has its expiry moved on (at most once a day). A cookie from before sessions
 * had ids (no `sessionId`) holds nothing: its person signs in again.
 */
export async function consoleSessionHolds(db: Db, userId: string, sessionId: unknown): Promise<boolean> {
  if (typeof sessionId !== "string" || sessionId.length > 200) return false;
  const [row] = await db
    .select({ stale: sql<boolean>`${consoleSessions.expiresAt} < now() + make_interval(days => ${CONSOLE_SESSION_DAYS}, secs => ${-SLIDE_AFTER_S})` })
    .from(consoleSessions)
    .where(and(eq(consoleSessions.id, sessionId), eq(consoleSessions.userId, userId), gt(consoleSessions.expiresAt, sql`now()`)));
  if (!row) return false;
  if (row.stale) {
    await db
      .update(consoleSessions)
      .set({ expiresAt: sql`now() + make_interval(days => ${CONSOLE_SESSION_DAYS})` })
      .where(eq(consoleSessions.id, sessionId));
  }
  return true;
}

/** Removes console sessions that have expired (the hourly housekeeping: lib/boot.ts). */
export async function pruneConsoleSessions(db: Db): Promise<void> {
  await db.delete(consoleSessions).where(lt(consoleSessions.expiresAt, sql`now()`));
}

/** Ends a console session (signing out): its cookie, wherever a copy of it is, signs nobody in. */
export async function endConsoleSession(db: Db, sessionId: unknown): Promise<void> {
  if (typeof sessionId !== "string") return;
  await db.delete(consoleSessions).where(eq(consoleSessions.id, sessionId));
}

/**
 * Auth.js's `jwt` callback, run wherever a session is read (`auth()`, its session endpoint): a
 * sign-in (`signedInAs`) starts a console session, whose id the cookie carries; afterwards the
 * token holds only while its session does, and null makes Auth.js clear the cookie. A session
 * that could not be checked (the database did not answer) keeps its token, so the cookie is not
 * cleared over a passing fault (Auth.js takes an error thrown here for a bad cookie), but signs
 * nobody in for this request (`sessionUserOf`): a cookie signed out before is never let through.
 */
export async function checkedSessionToken<T extends Record<string, unknown>>(
  getDb: () => Promise<Db>,
  token: T,
  signedInAs: string | undefined,
): Promise<T | null> {
  if (signedInAs) return { ...token, uid: signedInAs, sid: await startConsoleSession(await getDb(), signedInAs) };
  if (typeof token.uid !== "string") return null;
  try {
    return (await consoleSessionHolds(await getDb(), token.uid, token.sid)) ? token : null;
  } catch (err) {
    log.error("console session not checked: the database did not answer", { error: errorText(err) });
    unchecked.add(token);
    return token;
  }
}

/** Tokens whose session could not be checked in this request (`checkedSessionToken`). */
const unchecked = new WeakSet<object>();

/** Auth.js's `session` callback: the signed-in person's id, unless the token's session was not checked. */
export function sessionUserOf(token: Record<string, unknown>): string | null {
  return typeof token.uid === "string" && !unchecked.has(token) ? token.uid : null;
}
