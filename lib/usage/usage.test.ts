import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { sha256Hex } from "../crypto/random";
import { oauthClients, oauthGrants, oauthTokenFamilies } from "../db/schema";
import { ApiError } from "../http/errors";
import { consumeRateLimit } from "../http/rate-limit";
import { issueAccessToken, issueAppAccessToken } from "../oauth/access-token";
import { awayFromWindowEdge } from "../testing/clock";
import { setupApi } from "../testing/fixtures";
import { getAppUsage } from "./get-app-usage";
import { AppUsage } from "./schemas";

const api = setupApi();
const DAY = 86_400_000;

async function registeredApp(ownerId: string | null = null) {
  const db = await api.db();
  const clientId = `usage-${randomBytes(4).toString("hex")}`;
  await db.insert(oauthClients).values({
    clientId,
    ownerId,
    name: "Usage App",
    kind: "confidential",
    secretHash: sha256Hex("secret"),
    redirectUris: ["https://usage.example.com/cb"],
  });
  return clientId;
}

/** A client-credentials token, as the token endpoint issues it: no grant, no family, no scopes. */
async function appToken(clientId: string) {
  return (await issueAppAccessToken(await api.db(), { clientId, secretHash: sha256Hex("secret") })).token;
}

async function count(clientId: string, n: number, atMs: number) {
  const db = await api.db();
  for (let i = 0; i < n; i++) await consumeRateLimit(db, `app:${clientId}`, atMs);
}

describe("getAppUsage", () => {
  it("gives every one of the last 30 UTC days, oldest first, zeros included, and reads the windows without counting", async () => {
    const clientId = await registeredApp();
    const now = Date.UTC(2026, 10, 21, 10, 20, 30);
    await count(clientId, 3, now);
    await count(clientId, 2, now - DAY);
    await count(clientId, 7, now - 29 * DAY);
    await count(clientId, 9, now - 30 * DAY); // outside the 30 days
    await count("someone-else", 4, now);

    const ctx = { db: await api.db(), actor: { kind: "app" as const, clientId } };
    const usage = AppUsage.parse(await getAppUsage({ ctx, nowMs: now }));
    expect(usage.client_id).toBe(clientId);
    expect(usage.days).toHaveLength(30);
    expect(usage.days[0]).toEqual({ date: "2026-10-23", requests: 7 });
    expect(usage.days[28]).toEqual({ date: "2026-11-20", requests: 2 });
    expect(usage.days[29]).toEqual({ date: "2026-11-21", requests: 3 });
    expect(usage.days.slice(1, 28).every((d) => d.requests === 0)).toBe(true);
    expect(new Set(usage.days.map((d) => d.date)).size).toBe(30);

    expect(usage.windows).toEqual([
      { name: "15min", window_s: 900, limit: 600, used: 3, remaining: 597, resets_at: "2026-11-21T10:30:00.000Z" },
      { name: "daily", window_s: 86400, limit: 30000, used: 3, remaining: 29997, resets_at: "2026-11-22T00:00:00.000Z" },
    ]);
    // Reading usage is not a request against the windows.
    expect((await getAppUsage({ ctx, nowMs: now })).windows[0]!.used).toBe(3);
  });

  it("reads an untouched app as all zeros", async () => {
    const clientId = await registeredApp();
    const usage = await getAppUsage({ ctx: { db: await api.db(), actor: { kind: "app", clientId } } });
    expect(usage.days.every((d) => d.requests === 0)).toBe(true);
    expect(usage.windows.map((w) => [w.used, w.remaining])).toEqual([
      [0, 600],
      [0, 30000],
    ]);
  });

  it("gives an app's owner its usage in the console, and anyone else not_found", async () => {
    const owner = await api.person();
    const other = await api.person();
    const clientId = await registeredApp(owner.id);
    await count(clientId, 2, Date.now());
    const db = await api.db();
    const mine = await getAppUsage({ ctx: { db, actor: { kind: "session", userId: owner.id } }, clientId });
    expect(mine.days.at(-1)!.requests).toBe(2);
    const err = await getAppUsage({ ctx: { db, actor: { kind: "session", userId: other.id } }, clientId }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("not_found");
  });
});

describe("GET /v1/app/usage", () => {
  it("answers a client-credentials token with its own app's usage, this request included", async () => {
    const clientId = await registeredApp();
    const other = await registeredApp();
    // The counts below and the request's own must fall in one 15-minute window.
    await awayFromWindowEdge();
    await count(clientId, 4, Date.now());
    await count(other, 10, Date.now());
    const token = await appToken(clientId);

    const res = await api.call(token, "GET", "/v1/app/usage");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = AppUsage.parse(await res.json());
    expect(body.client_id).toBe(clientId);
    expect(body.days).toHaveLength(30);
    // Today as the service saw it: the day the daily window that resets next began.
    const daily = body.windows.find((w) => w.name === "daily")!;
    const today = new Date(Date.parse(daily.resets_at) - 86_400_000).toISOString().slice(0, 10);
    expect(body.days.at(-1)).toEqual({ date: today, requests: 5 });
    expect(body.windows.map((w) => w.used)).toEqual([5, 5]);
    // The headers and the body tell the same story.
    expect(res.headers.get("ratelimit")).toMatch(/^"15min";r=595;t=\d+, "daily";r=29995;t=\d+$/);

    const again = AppUsage.parse(await (await api.call(token, "GET", "/v1/app/usage")).json());
    expect(again.days.at(-1)!.requests).toBe(6);
  });

  it("refuses a personal access token with 403 client_credentials_required", async () => {
    const person = await api.person();
    const res = await api.call(await api.pat(person.id), "GET", "/v1/app/usage");
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(await res.json()).toMatchObject({ code: "client_credentials_required", status: 403 });
  });

  it("refuses an athlete's OAuth access token with 403 client_credentials_required", async () => {
    const athlete = await api.person();
    const clientId = await registeredApp();
    const db = await api.db();
    await db.insert(oauthGrants).values({ id: `grt_${clientId}`, clientId, userId: athlete.id, scopes: ["athlete.read"] });
    await db.insert(oauthTokenFamilies).values({ id: `fam_${clientId}`, grantId: `grt_${clientId}`, scopes: ["athlete.read"] });
    const { token } = await issueAccessToken(db, {
      subject: athlete.id,
      clientId,
      scopes: ["athlete.read"],
      grantId: `grt_${clientId}`,
      familyId: `fam_${clientId}`,
    });
    expect((await api.call(token, "GET", "/v1/athletes/me")).status).toBe(200);
    const res = await api.call(token, "GET", "/v1/app/usage");
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "client_credentials_required" });
  });

  it("answers 401 without a token and 405 for other methods", async () => {
    expect((await api.call(null, "GET", "/v1/app/usage")).status).toBe(401);
    const res = await api.call(await appToken(await registeredApp()), "POST", "/v1/app/usage");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });
});
