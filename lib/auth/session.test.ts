import { Auth, skipCSRFCheck } from "@auth/core";
import Credentials from "@auth/core/providers/credentials";
import { encode } from "next-auth/jwt";
import { eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { consoleSessions } from "../db/schema";
import { resetEnvForTests } from "../env";
import { authSecret } from "../secrets";
import { setupApi } from "../testing/fixtures";
import { checkedSessionToken, pruneConsoleSessions, sessionUserOf, CONSOLE_SESSION_DAYS, consoleSessionHolds, endConsoleSession, startConsoleSession } from "./console-sessions";
import { endSessionOf, secureSessionCookie, sessionCookieConfig, sessionUserId } from "./session";

const api = setupApi();

const before = process.env.BASE_URL;
afterEach(() => {
  if (before === undefined) delete process.env.BASE_URL;
  else process.env.BASE_URL = before;
  resetEnvForTests();
});

/** A request carrying a session cookie `name` for `uid`, as Auth.js writes it after a sign-in. */
async function withSession(name: string, uid: string, sid?: string): Promise<Request> {
  const value = await encode({ token: { sub: uid, uid, ...(sid ? { sid } : {}) }, secret: authSecret(), salt: name, maxAge: 3600 });
  return new Request("http://localhost/api/console/profile", { headers: { cookie: `${name}=${value}` } });
}

/** A person with a console session of their own, as a sign-in leaves them. */
async function signedIn() {
  const person = await api.person();
  return { id: person.id, sid: await startConsoleSession(await api.db(), person.id) };
}

function servedAt(baseUrl: string) {
  process.env.BASE_URL = baseUrl;
  resetEnvForTests();
}

describe("sessionUserId: the session cookie follows BASE_URL's scheme", () => {
  it("over https reads only the __Secure- cookie: a plain one (which any page could plant) signs nobody in", async () => {
    servedAt("https://aas.example.com");
    const p = await signedIn();
    expect(await sessionUserId(await withSession("__Host-authjs.session-token", p.id, p.sid))).toBe(p.id);
    expect(await sessionUserId(await withSession("authjs.session-token", p.id, p.sid))).toBeNull();
    expect(await sessionUserId(await withSession("__Secure-authjs.session-token", p.id, p.sid))).toBeNull();
  });

  it("over http reads the plain cookie, as Auth.js writes it there", async () => {
    servedAt("http://localhost:3000");
    const p = await signedIn();
    expect(await sessionUserId(await withSession("authjs.session-token", p.id, p.sid))).toBe(p.id);
    expect(await sessionUserId(await withSession("__Host-authjs.session-token", p.id, p.sid))).toBeNull();
  });
});

describe("the session cookie Auth.js writes with this service's settings (lib/auth/next-auth.ts)", () => {
  async function signInThroughAuthJs(baseUrl: string) {
    servedAt(baseUrl);
    const res = await Auth(
      new Request(`${baseUrl}/api/auth/callback/credentials`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email: "a@example.com", password: "a-password-of-length" }),
      }),
      {
        secret: authSecret(),
        trustHost: true,
        basePath: "/api/auth",
        useSecureCookies: secureSessionCookie(),
        cookies: sessionCookieConfig(),
        skipCSRFCheck,
        providers: [Credentials({ credentials: { email: {}, password: {} }, authorize: () => ({ id: "ath_cookie", email: "a@example.com" }) })],
      },
    );
    return res.headers.getSetCookie().find((c) => c.includes("session-token="));
  }

  it("over https is a __Host- cookie: Secure, Path=/, no Domain, HttpOnly, SameSite=Lax", async () => {
    const cookie = await signInThroughAuthJs("https://aas.example.com");
    expect(cookie).toMatch(/^__Host-authjs\.session-token=/);
    expect(cookie).toMatch(/; Secure/i);
    expect(cookie).toMatch(/; Path=\/(;|$)/i);
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).not.toMatch(/; Domain=/i);
  });

  it("over http is the plain cookie, without Secure (a browser would drop it)", async () => {
    const cookie = await signInThroughAuthJs("http://localhost:3000");
    expect(cookie).toMatch(/^authjs\.session-token=/);
    expect(cookie).not.toMatch(/; Secure/i);
  });
});

describe("a session cookie holds only while its console session does", () => {
  const name = "authjs.session-token";

  it("signing out ends the session everywhere: a copy of the cookie taken before signs nobody in", async () => {
    const p = await signedIn();
    const other = await startConsoleSession(await api.db(), p.id);
    const copy = await withSession(name, p.id, p.sid);
    expect(await sessionUserId(copy)).toBe(p.id);
    await endConsoleSession(await api.db(), p.sid);
    expect(await sessionUserId(copy)).toBeNull();
    // Over HTTP too: the console's API answers the copy as it answers no session.
    const res = await fetch(`${api.url}/api/console/profile`, { headers: { cookie: copy.headers.get("cookie")! } });
    expect(res.status).toBe(401);
    // The person's other sign-in (another browser) is not touched.
    expect(await sessionUserId(await withSession(name, p.id, other))).toBe(p.id);
  });

  it("the sign-out action ends the session its cookie names, and only that one", async () => {
    const p = await signedIn();
    const other = await startConsoleSession(await api.db(), p.id);
    const copy = await withSession(name, p.id, p.sid);
    await endSessionOf(copy.headers.get("cookie"));
    expect(await sessionUserId(copy)).toBeNull();
    expect(await sessionUserId(await withSession(name, p.id, other))).toBe(p.id);
    await endSessionOf(null);
    await endSessionOf("authjs.session-token=garbage");
  });

  it("a cookie without a session id, or with someone else's, or with one that never existed, signs nobody in", async () => {
    const p = await signedIn();
    const q = await signedIn();
    expect(await sessionUserId(await withSession(name, p.id))).toBeNull();
    expect(await sessionUserId(await withSession(name, p.id, q.sid))).toBeNull();
    expect(await sessionUserId(await withSession(name, p.id, "ses_neverissued"))).toBeNull();
    expect(await sessionUserId(await withSession(name, p.id, p.sid))).toBe(p.id);
  });

  it("an expired session signs nobody in and is removed at the person's next sign-in; one in use slides on", async () => {
    const db = await api.db();
    const p = await signedIn();
    await db.update(consoleSessions).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(consoleSessions.id, p.sid));
    expect(await consoleSessionHolds(db, p.id, p.sid)).toBe(false);
    const fresh = await startConsoleSession(db, p.id);
    expect((await db.select().from(consoleSessions).where(eq(consoleSessions.userId, p.id))).map((r) => r.id)).toEqual([fresh]);
    // Someone who never signs in again: the hourly housekeeping removes theirs.
    const q = await signedIn();
    await db.update(consoleSessions).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(consoleSessions.id, q.sid));
    await pruneConsoleSessions(db);
    expect(await db.select().from(consoleSessions).where(eq(consoleSessions.userId, q.id))).toEqual([]);

    // Last moved on two days ago: used now, it is good for the whole period again.
    await db.update(consoleSessions).set({ expiresAt: sql`now() + make_interval(days => ${CONSOLE_SESSION_DAYS - 2})` }).where(eq(consoleSessions.id, fresh));
    expect(await consoleSessionHolds(db, p.id, fresh)).toBe(true);
    const [row] = await db.select({ left: sql<number>`extract(epoch from ${consoleSessions.expiresAt} - now())` }).from(consoleSessions).where(eq(consoleSessions.id, fresh));
    expect(Number(row!.left)).toBeGreaterThan((CONSOLE_SESSION_DAYS - 1) * 86_400);
  });
});

describe("checkedSessionToken: Auth.js's jwt callback", () => {
  it("a sign-in starts a session the token names; afterwards the token holds while the session does", async () => {
    const db = await api.db();
    const person = await api.person();
    const signed = await checkedSessionToken<Record<string, unknown>>(api.db, { sub: person.id }, person.id);
    expect(signed).toMatchObject({ sub: person.id, uid: person.id, sid: expect.stringMatching(/^ses_/) });
    expect(await checkedSessionToken(api.db, signed!, undefined)).toBe(signed);
    await endConsoleSession(db, signed!.sid);
    expect(await checkedSessionToken(api.db, signed!, undefined)).toBeNull();
    expect(await checkedSessionToken(api.db, { sub: person.id }, undefined)).toBeNull();
  });

  it("a session that could not be checked keeps its cookie but signs nobody in for that request", async () => {
    const person = await api.person();
    const signed = (await checkedSessionToken(api.db, {}, person.id))!;
    expect(sessionUserOf((await checkedSessionToken(api.db, { ...signed }, undefined))!)).toBe(person.id);
    // The edge of what can be made to fail here: a database handle that does not answer.
    const unreachable = () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:5432"));
    const kept = { ...signed };
    expect(await checkedSessionToken(unreachable, kept, undefined)).toBe(kept);
    expect(sessionUserOf(kept)).toBeNull();
  });
});
