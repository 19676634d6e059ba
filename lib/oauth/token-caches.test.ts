import { beforeAll, describe, expect, it } from "vitest";
import { inWriteCtx } from "../http/operation";
import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { importJWK, SignJWT } from "jose";
import { sha256Hex } from "../crypto/random";
import { rowsOf, type Db } from "../db/client";
import { oauthClients, signingKeys } from "../db/schema";
import { getEnv } from "../env";
import { deleteApp } from "../oauth-clients/delete-app";
import { registerApp } from "../oauth-clients/register-app";
import { rotateClientSecret } from "../oauth-clients/rotate-client-secret";
import { setupApi } from "../testing/fixtures";
import { CLIENT_CACHE_TTL_MS, CLIENT_CHANNEL, clientCacheStateForTests } from "./client-cache";
import { TOKEN_LIMIT_SYNC_MS } from "./token-limit";
import { clientSecretFingerprint } from "./access-token";
import { privateJwkOf } from "./keys";

// What POST /oauth/token and /v1 keep in memory to stay cheap (client-cache.ts, verified
// access tokens in access-token.ts, the endpoint's limit in token-limit.ts), and that keeping
// it never outlives a change: a rotated secret, a deleted app, an expired token, other
// instances' counts. Real HTTP against the test server, on PGlite and
// (TEST_DATABASE_URL) PostgreSQL.

const api = setupApi();
let db: Db;

beforeAll(async () => {
  db = await api.db();
});

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

function clientCredentials(id: string, secret: string): Promise<Response> {
  return fetch(`${api.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic(id, secret) },
    body: "grant_type=client_credentials",
  });
}

async function expectToken(res: Response): Promise<string> {
  const body = (await res.json()) as { access_token?: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.access_token!;
}

async function expectInvalidClient(res: Response): Promise<void> {
  expect(res.status).toBe(401);
  expect(await res.json()).toMatchObject({ error: "invalid_client" });
}

/** A confidential app whose credentials have just authenticated, so the cache holds it. */
async function cachedApp(name: string) {
  const developer = await api.person();
  const ctx = { db, actor: { kind: "session" as const, userId: developer.id } };
  const { app, client_secret } = await inWriteCtx(ctx, (ctx) => registerApp({ ctx, input: { name, kind: "confidential", redirect_uris: ["https://app.example/cb"] } }));
  // The cache keeps an app only once it listens for changes, which starts with the first
  // request and may take a while on a busy machine: authenticate until a copy is kept.
  let requests = 0;
  await waitFor(async () => {
    await expectToken(await clientCredentials(app.client_id, client_secret!));
    requests++;
    return clientCacheStateForTests().cached.includes(app.client_id);
  });
  return { ctx, clientId: app.client_id, secret: client_secret!, requests };
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the client cache behind /oauth/token", () => {
  it("serves a confidential app's authentication from memory once it has listened for changes", async () => {
    const app = await cachedApp("Cached");
    expect(clientCacheStateForTests().listening).toBe(true);
    expect(clientCacheStateForTests().cached).toContain(app.clientId);
    // Unknown ids are never kept (guesses must not fill memory).
    await expectInvalidClient(await clientCredentials("no-such-app", "aas_cs_x"));
    expect(clientCacheStateForTests().cached).not.toContain("no-such-app");
  });

  it("refuses the old secret on the very next request after a rotation, inside a transaction as the console runs it", async () => {
    const app = await cachedApp("Rotated");
    const rotated = await inWriteCtx(app.ctx, (ctx) => rotateClientSecret({ ctx, clientId: app.clientId }));
    await expectInvalidClient(await clientCredentials(app.clientId, app.secret));
    await expectToken(await clientCredentials(app.clientId, rotated.client_secret!));
  });

  it("refuses a deleted app's credentials and its client-credentials tokens on the very next request", async () => {
    const app = await cachedApp("Deleted");
    const token = await expectToken(await clientCredentials(app.clientId, app.secret));
    expect((await api.call(token, "GET", "/v1/app/usage")).status).toBe(200);
    await inWriteCtx(app.ctx, (ctx) => deleteApp({ ctx, clientId: app.clientId }));
    await expectInvalidClient(await clientCredentials(app.clientId, app.secret));
    const res = await api.call(token, "GET", "/v1/app/usage");
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: "token_revoked" });
  });

  it("drops its copy when another instance announces a change (LISTEN/NOTIFY on aas_oauth_clients)", async () => {
    const app = await cachedApp("Changed Elsewhere");
    // Another instance rotates the secret: a write this process never saw, then its notification.
    await db.update(oauthClients).set({ secretHash: sha256Hex("aas_cs_elsewhere") }).where(eq(oauthClients.clientId, app.clientId));
    await db.execute(sql`select pg_notify(${CLIENT_CHANNEL}, ${`other-instance:1:${app.clientId}`})`);
    await waitFor(() => !clientCacheStateForTests().cached.includes(app.clientId));
    await expectInvalidClient(await clientCredentials(app.clientId, app.secret));
    await expectToken(await clientCredentials(app.clientId, "aas_cs_elsewhere"));
  });

  it(`uses a copy for at most ${CLIENT_CACHE_TTL_MS} ms when a change arrives with no notification (the bound if a listener is lost)`, { timeout: 20_000 }, async () => {
    const app = await cachedApp("Silent Change");
    await db.update(oauthClients).set({ secretHash: sha256Hex("aas_cs_silent") }).where(eq(oauthClients.clientId, app.clientId));
    const changedAt = Date.now();
    // Within the bound the old copy may still answer; past it, the database decides.
    await new Promise((r) => setTimeout(r, CLIENT_CACHE_TTL_MS + 50));
    expect(Date.now() - changedAt).toBeGreaterThan(CLIENT_CACHE_TTL_MS);
    await expectInvalidClient(await clientCredentials(app.clientId, app.secret));
    await expectToken(await clientCredentials(app.clientId, "aas_cs_silent"));
  });
});

describe("verified access tokens", () => {
  /** A client-credentials-shaped token signed with the service's key, living `ttlS` seconds. */
  async function shortToken(clientId: string, ttlS: number): Promise<string> {
    const [key] = await db.select().from(signingKeys).orderBy(signingKeys.createdAt).limit(1);
    const [client] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId));
    const env = getEnv();
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ client_id: clientId, csf: clientSecretFingerprint(client!.secretHash) })
      .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: key!.kid })
      .setIssuer(env.baseUrl)
      .setSubject(clientId)
      .setAudience(env.apiBaseUrl)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlS)
      .setJti(randomUUID())
      .sign(await importJWK(privateJwkOf(key!.privateJwk), "ES256"));
  }

  it("are still refused once they expire, though their signature was checked before (RFC 9068 §4)", { timeout: 10_000 }, async () => {
    const app = await cachedApp("Expiring");
    const token = await shortToken(app.clientId, 2);
    expect((await api.call(token, "GET", "/v1/app/usage")).status).toBe(200);
    expect((await api.call(token, "GET", "/v1/app/usage")).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_100));
    const res = await api.call(token, "GET", "/v1/app/usage");
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: "token_expired" });
  });

  it("are remembered by their exact text: a token altered after a good one was verified is refused", async () => {
    const app = await cachedApp("Tampered");
    const token = await expectToken(await clientCredentials(app.clientId, app.secret));
    expect((await api.call(token, "GET", "/v1/app/usage")).status).toBe(200);
    const [h, p, s] = token.split(".");
    const claims = JSON.parse(Buffer.from(p!, "base64url").toString()) as Record<string, unknown>;
    const forged = [h, Buffer.from(JSON.stringify({ ...claims, client_id: "demo-training-log", sub: "demo-training-log" })).toString("base64url"), s].join(".");
    const res = await api.call(forged, "GET", "/v1/app/usage");
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: "token_invalid" });
  });
});

describe("the /oauth/token limit, counted in memory and shared through the database", () => {
  const minuteStart = () => new Date(Math.floor(Date.now() / 60_000) * 60_000);
  async function counter(bucket: string): Promise<number> {
    const result = await db.execute(sql`select count from rate_limit_counters where bucket = ${bucket} and window_start = ${minuteStart().toISOString()}`);
    return Number(rowsOf<{ count: number }>(result)[0]?.count ?? 0);
  }
  /** Waits for a fresh minute when the current one is nearly over, so the test stays in one window. */
  async function startOfMinute() {
    const into = Date.now() % 60_000;
    if (into > 50_000) await new Promise((r) => setTimeout(r, 60_000 - into + 100));
  }

  it(`sends this process's hits to rate_limit_counters within ${TOKEN_LIMIT_SYNC_MS} ms, so other instances count them`, async () => {
    await startOfMinute();
    const app = await cachedApp("Counted");
    await waitFor(async () => (await counter(`oauth-token-client:${app.clientId}`)) === app.requests);
    for (let i = 0; i < 5; i++) await expectToken(await clientCredentials(app.clientId, app.secret));
    await waitFor(async () => (await counter(`oauth-token-client:${app.clientId}`)) === app.requests + 5);
  });

  it(`refuses a client whose window other instances filled, at the latest ${TOKEN_LIMIT_SYNC_MS} ms after this process first hears of it (the bound)`, async () => {
    await startOfMinute();
    const app = await cachedApp("Busy Elsewhere");
    // Other instances have counted 600 requests from this client in this minute.
    await db.execute(sql`
      insert into rate_limit_counters (bucket, window_start, count)
      values (${`oauth-token-client:${app.clientId}`}, ${minuteStart().toISOString()}, 600)
      on conflict (bucket, window_start) do update set count = 600`);
    // This process learns it when it next sends its own hits; until then it decides alone.
    await clientCredentials(app.clientId, app.secret).then((r) => r.body?.cancel());
    await new Promise((r) => setTimeout(r, TOKEN_LIMIT_SYNC_MS + 300));
    const res = await clientCredentials(app.clientId, app.secret);
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: "slow_down" });
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });
});
