import { randomBytes } from "node:crypto";
import { count, eq, type SQL } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { sessionCookieFor } from "../auth/test-session";
import { sha256Hex } from "../crypto/random";
import { oauthClients, personalAccessTokens, teamMemberships, teams, users } from "../db/schema";
import { newId } from "../ids";
import { setupApi } from "../testing/fixtures";
import { CAPS } from "./caps";
import { ENDED_TOKENS_LISTED } from "../tokens/personal-access-tokens";

const api = setupApi();

/** A console write as `userId`, signed in and same-origin, as the console's pages send it. */
async function consolePost(userId: string, path: string, body: unknown) {
  return fetch(api.url + path, {
    method: "POST",
    headers: { cookie: await sessionCookieFor(userId), origin: api.url, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function conflict(res: Response): Promise<{ detail: string }> {
  expect(res.status).toBe(409);
  const body = (await res.json()) as { code: string; detail: string };
  expect(body.code).toBe("conflict");
  return body;
}

/** A personal access token row of `userId`'s, in force unless `over` says otherwise. */
const patRow = (userId: string, i: number, over: Partial<typeof personalAccessTokens.$inferInsert> = {}) => ({
  id: newId("pat"),
  userId,
  name: `t${i}`,
  tokenHash: sha256Hex(randomBytes(16).toString("hex")),
  lastFour: "abcd",
  scopes: ["athlete.read"],
  ...over,
});

async function rows(table: PgTable, where: SQL) {
  const [row] = await (await api.db()).select({ n: count() }).from(table).where(where);
  return Number(row!.n);
}

describe("how many of each thing one owner may hold (CAPS): the create past the cap is 409 in words and adds nothing", () => {
  it(`personal access tokens: ${CAPS.activeTokensPerPerson} in force; revoked and expired ones do not count`, async () => {
    const person = await api.person();
    const db = await api.db();
    const token = (i: number, over: Partial<typeof personalAccessTokens.$inferInsert> = {}) => patRow(person.id, i, over);
    await db.insert(personalAccessTokens).values([
      ...Array.from({ length: CAPS.activeTokensPerPerson - 1 }, (_, i) => token(i)),
      token(-1, { revokedAt: new Date() }),
      token(-2, { expiresAt: new Date(Date.now() - 1000) }),
    ]);
    const create = () => consolePost(person.id, "/api/console/tokens", { name: "One more", scopes: ["athlete.read"], expires_in_days: null });
    expect((await create()).status).toBe(201);
    const body = await conflict(await create());
    expect(body.detail).toBe(`You have ${CAPS.activeTokensPerPerson} tokens in force, the most one person may: revoke one you no longer use first.`);
    expect(await rows(personalAccessTokens, eq(personalAccessTokens.userId, person.id))).toBe(CAPS.activeTokensPerPerson + 2);
  });

  it(`lists every token in force and the ${ENDED_TOKENS_LISTED} that ended last, newest first: revoking in a loop does not grow the list`, async () => {
    const person = await api.person();
    const db = await api.db();
    const t0 = Date.now() - 86_400_000;
    const at = (s: number) => new Date(t0 + s * 1000);
    const token = (name: string, over: Partial<typeof personalAccessTokens.$inferInsert>) => ({
      id: newId("pat"),
      userId: person.id,
      name,
      tokenHash: sha256Hex(randomBytes(16).toString("hex")),
      lastFour: "abcd",
      scopes: ["athlete.read"],
      ...over,
    });
    const ended = Array.from({ length: ENDED_TOKENS_LISTED + 10 }, (_, i) => token(`ended ${i}`, { createdAt: at(i), revokedAt: at(1000 + i) }));
    // Made first and kept longest: in force, it is listed however old.
    const oldLive = token("old live", { createdAt: at(-100) });
    // Made last but ended first: the earliest to end is left out.
    const expiredEarly = token("expired early", { createdAt: at(500), expiresAt: at(600) });
    const newLive = token("new live", { createdAt: at(501) });
    await db.insert(personalAccessTokens).values([...ended, oldLive, expiredEarly, newLive]);
    const res = await fetch(`${api.url}/api/console/tokens`, { headers: { cookie: await sessionCookieFor(person.id) } });
    expect(res.status).toBe(200);
    const names = ((await res.json()) as { name: string }[]).map((t) => t.name);
    const lastEnded = ended.slice(-ENDED_TOKENS_LISTED).map((t) => t.name).reverse();
    expect(names).toEqual(["new live", ...lastEnded, "old live"]);
  });

  it(`apps: ${CAPS.appsPerPerson} per developer`, async () => {
    const person = await api.person();
    await (await api.db()).insert(oauthClients).values(
      Array.from({ length: CAPS.appsPerPerson - 1 }, (_, i) => ({
        clientId: `cap-${randomBytes(6).toString("hex")}-${i}`,
        ownerId: person.id,
        name: `App ${i}`,
        kind: "public" as const,
        redirectUris: ["https://cap.example.com/cb"],
      })),
    );
    const create = () => consolePost(person.id, "/api/console/apps", { name: "One more", kind: "public", redirect_uris: ["https://cap.example.com/cb"] });
    expect((await create()).status).toBe(201);
    const body = await conflict(await create());
    expect(body.detail).toBe(`You have ${CAPS.appsPerPerson} apps, the most one developer may: delete one you no longer use first.`);
    expect(await rows(oauthClients, eq(oauthClients.ownerId, person.id))).toBe(CAPS.appsPerPerson);
  });

  it(`teams: ${CAPS.coachedTeamsPerPerson} coached; a team the person only plays on does not count`, async () => {
    const person = await api.person();
    const other = await api.person();
    const db = await api.db();
    const ids = Array.from({ length: CAPS.coachedTeamsPerPerson }, () => newId("team"));
    await db.insert(teams).values(ids.map((id, i) => ({ id, name: `Team ${i}`, createdBy: i === 0 ? other.id : person.id })));
    await db.insert(teamMemberships).values(
      ids.map((teamId, i) => ({
        teamId,
        userId: person.id,
        // The first is another coach's team the person is an athlete on.
        role: i === 0 ? ("athlete" as const) : ("coach" as const),
        status: "active" as const,
        joinedAt: new Date(),
      })),
    );
    const create = () => consolePost(person.id, "/api/console/teams", { name: "One more" });
    expect((await create()).status).toBe(201);
    const body = await conflict(await create());
    expect(body.detail).toBe(`You coach ${CAPS.coachedTeamsPerPerson} teams, the most one person may: delete one you are done with first.`);
    expect(await rows(teamMemberships, eq(teamMemberships.userId, person.id))).toBe(CAPS.coachedTeamsPerPerson + 1);
  });

  it(`invitations: ${CAPS.pendingInvitationsPerTeam} unanswered per team; members who accepted do not count`, async () => {
    const coach = await api.person();
    const db = await api.db();
    const created = await consolePost(coach.id, "/api/console/teams", { name: "Open door" });
    const team = (await created.json()) as { id: string; name: string };
    const cap = CAPS.pendingInvitationsPerTeam;
    // Accounts inserted as rows: signing up this many through argon2 would take the test's time.
    const people = Array.from({ length: cap + 1 }, (_, i) => ({ id: newId("ath"), email: `cap-${i}-${randomBytes(4).toString("hex")}@example.test`, passwordHash: "x" }));
    await db.insert(users).values(people);
    const [accepted, ...invited] = people;
    await db.insert(teamMemberships).values([
      { teamId: team.id, userId: accepted!.id, role: "athlete" as const, status: "active" as const, joinedAt: new Date() },
      ...invited.slice(0, cap - 1).map((p) => ({ teamId: team.id, userId: p.id, role: "athlete" as const, status: "invited" as const, invitedBy: coach.id })),
    ]);
    const invite = (email: string) => consolePost(coach.id, `/api/console/teams/${team.id}/invitations`, { email });
    expect((await invite(invited[cap - 1]!.email)).status).toBe(201);
    const other = await api.person();
    const body = await conflict(await invite(other.email));
    expect(body.detail).toBe(`${team.name} has ${cap} invitations nobody has answered yet, the most a team may: withdraw some first.`);
    expect(await rows(teamMemberships, eq(teamMemberships.teamId, team.id))).toBe(cap + 2);
  });
});

// Parallel transactions need a server that runs them at once: the embedded database runs one at a time.
describe.skipIf(!process.env.TEST_DATABASE_URL)("a flood of creates at once cannot pass a cap together (PostgreSQL)", () => {
  it("personal access tokens: 5 places left, 40 creates at once: 5 made, 35 refused", async () => {
    const person = await api.person();
    const db = await api.db();
    await db.insert(personalAccessTokens).values(Array.from({ length: CAPS.activeTokensPerPerson - 5 }, (_, i) => patRow(person.id, i)));
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => consolePost(person.id, "/api/console/tokens", { name: `flood ${i}`, scopes: ["athlete.read"], expires_in_days: null }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 409)).toHaveLength(35);
    expect(await rows(personalAccessTokens, eq(personalAccessTokens.userId, person.id))).toBe(CAPS.activeTokensPerPerson);
  });

  it("apps: 2 places left, 20 registrations at once: 2 made", async () => {
    const person = await api.person();
    const db = await api.db();
    await db.insert(oauthClients).values(
      Array.from({ length: CAPS.appsPerPerson - 2 }, (_, i) => ({
        clientId: `app_${randomBytes(6).toString("hex")}`,
        ownerId: person.id,
        name: `a${i}`,
        kind: "public" as const,
        redirectUris: ["http://127.0.0.1/cb"],
      })),
    );
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => consolePost(person.id, "/api/console/apps", { name: `flood ${i}`, kind: "public", redirect_uris: ["http://127.0.0.1/callback"] }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(2);
    expect(await rows(oauthClients, eq(oauthClients.ownerId, person.id))).toBe(CAPS.appsPerPerson);
  });
});
