import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { randomBytes } from "node:crypto";
import { sha256Hex } from "../crypto/random";
import { events, oauthClients, oauthCodes, oauthGrants, oauthRefreshTokens, oauthTokenFamilies } from "../db/schema";
import { issueAccessToken } from "../oauth/access-token";
import { generateToken } from "../tokens/format";
import { resolveBearer } from "../tokens/resolve-bearer";
import { refusal, setupApi } from "../testing/fixtures";
import { countRows } from "../testing/rows";
import { disconnectApp } from "./disconnect-app";
import { listConnectedApps } from "./list-connected-apps";
import { inWriteCtx, type WriteCtx } from "../http/operation";

const api = setupApi();

/** A write verb called as the signed-in person, in a transaction of its own (as the console's wrapper runs it). */
async function writeAs<T>(userId: string, verb: (ctx: WriteCtx) => Promise<T>): Promise<T> {
  return inWriteCtx({ db: await api.db(), actor: { kind: "session", userId } }, verb);
}

const rand = () => randomBytes(6).toString("hex");

async function app(over: Partial<typeof oauthClients.$inferInsert> = {}) {
  const db = await api.db();
  const clientId = `app-${rand()}`;
  await db.insert(oauthClients).values({
    clientId,
    name: "Training Log",
    kind: "confidential",
    secretHash: sha256Hex("x"),
    redirectUris: ["https://log.example.com/cb"],
    ...over,
  });
  return clientId;
}

/** A grant as the token endpoint leaves it: with `families` token families and a pending code. */
async function grant(clientId: string, userId: string, scopes: string[], opts: { families?: number; at?: Date } = {}) {
  const db = await api.db();
  const id = `grt_${rand()}`;
  const at = opts.at ?? new Date();
  await db.insert(oauthGrants).values({ id, clientId, userId, scopes, createdAt: at, updatedAt: at });
  for (let i = 0; i < (opts.families ?? 2); i++) {
    await db.insert(oauthTokenFamilies).values({ id: `fam_${rand()}`, grantId: id, scopes });
  }
  await db.insert(oauthCodes).values({
    codeHash: sha256Hex(rand()),
    clientId,
    grantId: id,
    redirectUri: "https://log.example.com/cb",
    scopes,
    codeChallenge: "x".repeat(43),
    expiresAt: new Date(Date.now() + 60_000),
  });
  return id;
}

describe("listConnectedApps", () => {
  it("lists the athlete's active grants with the app, scopes in plain words and times, newest change first", async () => {
    const athlete = await api.person();
    const other = await api.person();
    const log = await app({ name: "Training Log", logoUrl: "https://log.example.com/logo.png", homepageUrl: "https://log.example.com" });
    const coach = await app({ name: "Coach App" });
    const gone = await app({ name: "Gone" });
    const older = new Date(Date.now() - 7 * 86_400_000);
    const logGrant = await grant(log, athlete.id, ["athlete.read", "activities.read"], { at: older });
    const coachGrant = await grant(coach, athlete.id, ["metrics.read"]);
    await grant(log, other.id, ["athlete.read"]);
    const revoked = await grant(gone, athlete.id, ["athlete.read"]);
    await writeAs(athlete.id, (ctx) => disconnectApp({ ctx, grantId: revoked }));

    const list = await listConnectedApps(await api.as(athlete.id));
    expect(list.map((a) => a.grant_id)).toEqual([coachGrant, logGrant]);
    expect(list[1]).toEqual({
      grant_id: logGrant,
      client_id: log,
      name: "Training Log",
      logo_url: "https://log.example.com/logo.png",
      homepage_url: "https://log.example.com",
      scopes: [
        { name: "athlete.read", plain: "Read your profile: name, email, timezone and connected devices" },
        { name: "activities.read", plain: "Read your activities" },
      ],
      authorized_at: older.toISOString(),
      updated_at: older.toISOString(),
      last_used_at: null,
      kind: "app",
      host: null,
    });
    expect(await listConnectedApps(await api.as((await api.person()).id))).toEqual([]);
  });
});

describe("disconnectApp", () => {
  it("revokes the grant and every family, drops pending codes and appends exactly one athlete.deauthorized", async () => {
    const athlete = await api.person();
    const clientId = await app();
    const grantId = await grant(clientId, athlete.id, ["athlete.read", "activities.read"], { families: 3 });
    const db = await api.db();
    const eventsBefore = await countRows(events);

    const out = await writeAs(athlete.id, (ctx) => disconnectApp({ ctx, grantId }));
    expect(out).toMatchObject({ grant_id: grantId, client_id: clientId });

    const [g] = await db.select().from(oauthGrants).where(eq(oauthGrants.id, grantId));
    expect(g!.revokedAt?.toISOString()).toBe(out.revoked_at);
    const families = await db.select().from(oauthTokenFamilies).where(eq(oauthTokenFamilies.grantId, grantId));
    expect(families).toHaveLength(3);
    for (const f of families) expect(f.revokedAt?.toISOString()).toBe(out.revoked_at);
    expect(await countRows(oauthCodes, eq(oauthCodes.grantId, grantId))).toBe(0);

    expect(await countRows(events)).toBe(eventsBefore + 1);
    const sent = await db.select().from(events).where(and(eq(events.type, "athlete.deauthorized"), eq(events.athleteId, athlete.id)));
    expect(sent).toEqual([
      expect.objectContaining({ athleteId: athlete.id, objectId: athlete.id, objectType: "athlete", clientId }),
    ]);
    expect(sent[0]!.id).toMatch(/^evt_/);
    expect(await listConnectedApps(await api.as(athlete.id))).toEqual([]);
  });

  it("is not_found the second time, and sends no second event", async () => {
    const athlete = await api.person();
    const grantId = await grant(await app(), athlete.id, ["athlete.read"]);
    await writeAs(athlete.id, (ctx) => disconnectApp({ ctx, grantId }));
    const eventsAfterFirst = await countRows(events);
    expect((await refusal(writeAs(athlete.id, (ctx) => disconnectApp({ ctx, grantId })))).code).toBe("not_found");
    expect(await countRows(events)).toBe(eventsAfterFirst);
  });

  it("cannot be done by another athlete, who gets not_found and changes nothing", async () => {
    const athlete = await api.person();
    const intruder = await api.person();
    const grantId = await grant(await app(), athlete.id, ["athlete.read"]);
    const eventsBefore = await countRows(events);
    expect((await refusal(writeAs(intruder.id, (ctx) => disconnectApp({ ctx, grantId })))).code).toBe("not_found");
    const db = await api.db();
    const [g] = await db.select().from(oauthGrants).where(eq(oauthGrants.id, grantId));
    expect(g!.revokedAt).toBeNull();
    const families = await db.select().from(oauthTokenFamilies).where(eq(oauthTokenFamilies.grantId, grantId));
    for (const f of families) expect(f.revokedAt).toBeNull();
    expect(await countRows(events)).toBe(eventsBefore);
    expect(await listConnectedApps(await api.as(athlete.id))).toHaveLength(1);
  });

  it("leaves the athlete's other apps and other athletes' grants of the same app connected", async () => {
    const athlete = await api.person();
    const other = await api.person();
    const clientId = await app();
    const mine = await grant(clientId, athlete.id, ["athlete.read"]);
    const theirs = await grant(clientId, other.id, ["athlete.read"]);
    const otherApp = await grant(await app(), athlete.id, ["athlete.read"]);
    await writeAs(athlete.id, (ctx) => disconnectApp({ ctx, grantId: mine }));
    expect((await listConnectedApps(await api.as(athlete.id))).map((a) => a.grant_id)).toEqual([otherApp]);
    expect((await listConnectedApps(await api.as(other.id))).map((a) => a.grant_id)).toEqual([theirs]);
  });

  it("refuses a client-credentials actor", async () => {
    const err = await refusal(
      inWriteCtx({ db: await api.db(), actor: { kind: "app", clientId: "x" } }, (ctx) => disconnectApp({ ctx, grantId: "grt_x" })),
    );
    expect(err.code).toBe("client_credentials_not_allowed");
  });
});

describe("disconnecting, over HTTP", () => {
  it("refuses the app's access token on the next request and stops its refresh token", async () => {
    const athlete = await api.person();
    const clientId = await app();
    const secret = "aas_cs_secret-for-this-test";
    const db = await api.db();
    await db.update(oauthClients).set({ secretHash: sha256Hex(secret) }).where(eq(oauthClients.clientId, clientId));
    const grantId = await grant(clientId, athlete.id, ["athlete.read"], { families: 1 });
    const [family] = await db.select().from(oauthTokenFamilies).where(eq(oauthTokenFamilies.grantId, grantId));
    const refreshToken = generateToken("refresh");
    await db.insert(oauthRefreshTokens).values({ tokenHash: sha256Hex(refreshToken), familyId: family!.id, expiresAt: new Date(Date.now() + 86_400_000) });
    const { token } = await issueAccessToken(db, { subject: athlete.id, clientId, scopes: ["athlete.read"], grantId, familyId: family!.id });
    const refresh = (refreshToken: string) =>
      fetch(`${api.url}/oauth/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken }),
      });

    expect((await api.call(token, "GET", "/v1/athletes/me")).status).toBe(200);
    const rotated = await refresh(refreshToken);
    expect(rotated.status).toBe(200);
    const { refresh_token: next } = (await rotated.json()) as { refresh_token: string };
    await writeAs(athlete.id, (ctx) => disconnectApp({ ctx, grantId }));

    const refused = await api.call(token, "GET", "/v1/athletes/me");
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: "token_revoked" });
    const res = await refresh(next);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_grant" });
  });
});

describe("what a token's request carries", () => {
  it("an access token resolves to its athlete's rows without the password hash; so does a PAT", async () => {
    const athlete = await api.person();
    const clientId = await app();
    const db = await api.db();
    const grantId = await grant(clientId, athlete.id, ["athlete.read"], { families: 1 });
    const [family] = await db.select().from(oauthTokenFamilies).where(eq(oauthTokenFamilies.grantId, grantId));
    const { token } = await issueAccessToken(db, { subject: athlete.id, clientId, scopes: ["athlete.read"], grantId, familyId: family!.id });
    for (const bearer of [token, await api.pat(athlete.id)]) {
      const resolved = await resolveBearer(db, `Bearer ${bearer}`);
      expect(resolved.self?.user).toMatchObject({ id: athlete.id, email: athlete.email });
      expect(resolved.self?.user).not.toHaveProperty("passwordHash");
    }
  });
});
