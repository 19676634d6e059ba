import { beforeAll, describe, expect, it, vi } from "vitest";
import { inWriteCtx } from "../http/operation";
import * as oauth from "oauth4webapi";
import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "../db/client";
import { registerApp } from "../oauth-clients/register-app";
import { setupApi } from "../testing/fixtures";
import { decideAuthorization } from "./authorize";
import { MAX_FORM_BYTES } from "./endpoint";
import { resetEnvForTests } from "../env";
import { TOKEN_LIMIT_MAX_WINDOWS, TokenEndpointLimiter } from "./token-limit";

// POST /oauth/token and /oauth/revoke as an attacker drives them: floods that name someone
// else's client, bodies that never end. Real HTTP against the test server; the flood comes
// from many addresses through a trusted proxy (the test server's loopback peer), as it would
// from the internet behind a load balancer.
process.env.TRUSTED_PROXIES = "loopback";

const api = setupApi();
let db: Db;

beforeAll(async () => {
  db = await api.db();
});

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

function post(path: "/oauth/token" | "/oauth/revoke", body: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(api.url + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(body).toString(),
  });
}

/** `n` requests, 50 at a time; the statuses in order. */
async function burst(n: number, send: (i: number) => Promise<Response>): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => send(i + j)));
    for (const r of batch) {
      statuses.push(r.status);
      await r.body?.cancel();
    }
  }
  return statuses;
}

/** Waits for a fresh minute when the current one is nearly over, so a burst fits in one window. */
async function startOfMinute(needS = 25) {
  const into = Date.now() % 60_000;
  if (into > 60_000 - needS * 1000) await new Promise((r) => setTimeout(r, 60_000 - into + 100));
}

async function counter(bucket: string): Promise<number> {
  const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const result = await db.execute(sql`select count from rate_limit_counters where bucket = ${bucket} and window_start = ${minute.toISOString()}`);
  return Number(rowsOf<{ count: number }>(result)[0]?.count ?? 0);
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs `fn` with RATE_LIMIT_OAUTH_TOKEN set to `limit`, and the default again after it. */
async function withTokenLimit(limit: number, fn: () => Promise<void>) {
  process.env.RATE_LIMIT_OAUTH_TOKEN = String(limit);
  resetEnvForTests();
  try {
    await fn();
  } finally {
    delete process.env.RATE_LIMIT_OAUTH_TOKEN;
    resetEnvForTests();
  }
}

async function expectOAuthError(res: Response, status: number, error: string) {
  const body = (await res.json()) as Record<string, unknown>;
  expect({ status: res.status, error: body.error }).toEqual({ status, error });
  expect(typeof body.error_description).toBe("string");
  return res;
}

const session = (userId: string) => ({ db, actor: { kind: "session" as const, userId } });

/**
 * A public app and one athlete's refresh token for it, obtained through the real flow. With
 * `clientId`, the app is given that id before anyone connects (a metadata document's URL is up
 * to 512 characters).
 */
async function publicAppWithAthlete(name: string, clientId?: string) {
  const developer = await api.person();
  const redirectUri = "http://127.0.0.1:7000/cb";
  const { app } = await inWriteCtx(session(developer.id), (ctx) => registerApp({ ctx, input: { name, kind: "public", redirect_uris: [redirectUri] } }));
  if (clientId) {
    await db.execute(sql`update oauth_clients set client_id = ${clientId} where client_id = ${app.client_id}`);
    app.client_id = clientId;
  }
  const athlete = await api.person();
  const verifier = oauth.generateRandomCodeVerifier();
  const step = await decideAuthorization(
    db,
    {
      client_id: app.client_id,
      redirect_uri: redirectUri,
      response_type: "code",
      scope: "athlete.read",
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    },
    athlete.id,
    "allow",
  );
  const code = new URL((step as { url: string }).url).searchParams.get("code")!;
  const res = await post("/oauth/token", { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: redirectUri, client_id: app.client_id }, { "x-forwarded-for": "192.0.2.10" });
  expect(res.status).toBe(200);
  const { refresh_token } = (await res.json()) as { refresh_token: string };
  return { clientId: app.client_id, refreshToken: refresh_token };
}

describe("the token endpoint counts a request against the client it proves, and failures against their address (CONTRACT §10)", () => {
  it("a flood of failed requests naming a public client does not put it into 429 for its honest users", { timeout: 120_000 }, async () => {
    await startOfMinute();
    const app = await publicAppWithAthlete("Popular Mobile");
    // Anyone can read a public client's id. 700 requests name it, from 50 addresses (14 each),
    // with refresh tokens and codes it never issued and a grant type it does not offer.
    const statuses = await burst(700, (i) =>
      post(
        "/oauth/token",
        i % 3 === 0
          ? { grant_type: "authorization_code", code: `guess-${i}`, code_verifier: "v".repeat(43), redirect_uri: "http://127.0.0.1:7000/cb", client_id: app.clientId }
          : i % 3 === 1
            ? { grant_type: "refresh_token", refresh_token: `aas_rt_guess${i}`, client_id: app.clientId }
            : { grant_type: "password", client_id: app.clientId },
        { "x-forwarded-for": `198.51.100.${i % 50}` },
      ),
    );
    expect(new Set(statuses)).toEqual(new Set([400]));

    // The client's honest user refreshes as usual.
    const res = await post("/oauth/token", { grant_type: "refresh_token", refresh_token: app.refreshToken, client_id: app.clientId }, { "x-forwarded-for": "192.0.2.20" });
    expect(res.status, await res.clone().text()).toBe(200);

    // The shared counters say the same: the client's window holds its two proven requests (the
    // code exchange and this refresh), each flooding address its own 14 failures.
    await waitFor(async () => (await counter(`oauth-token-client:${app.clientId}`)) === 2);
    await waitFor(async () => (await counter("oauth-token-addr:198.51.100.7")) === 14);
  });

  it("a client id of hundreds of characters has one window: its proven requests fill the one its next request is checked against", { timeout: 120_000 }, async () => {
    await withTokenLimit(5, async () => {
      await startOfMinute(30);
      const app = await publicAppWithAthlete("Long Id", `https://assistant.example/${"c".repeat(300)}/client.json`);
      // The code exchange was the first proven request; four refreshes fill the window.
      let refreshToken = app.refreshToken;
      for (let i = 0; i < 4; i++) {
        const res = await post("/oauth/token", { grant_type: "refresh_token", refresh_token: refreshToken, client_id: app.clientId }, { "x-forwarded-for": `192.0.2.${70 + i}` });
        expect(res.status, `refresh ${i + 1}`).toBe(200);
        refreshToken = ((await res.json()) as { refresh_token: string }).refresh_token;
      }
      const over = await post("/oauth/token", { grant_type: "refresh_token", refresh_token: refreshToken, client_id: app.clientId }, { "x-forwarded-for": "192.0.2.80" });
      await expectOAuthError(over, 429, "slow_down");
    });
  });

  it("a confidential client's window counts only requests with its valid secret: a wrong secret counts against the address", { timeout: 120_000 }, async () => {
    await startOfMinute(40);
    const developer = await api.person();
    const { app, client_secret } = await inWriteCtx(session(developer.id), (ctx) => registerApp({ ctx, input: { name: "Backend", kind: "confidential", redirect_uris: ["https://backend.example/cb"] } }));
    const bad = await burst(100, (i) => post("/oauth/token", { grant_type: "client_credentials" }, { authorization: basic(app.client_id, `aas_cs_wrong${i}`), "x-forwarded-for": `203.0.113.${i % 50}` }));
    expect(new Set(bad)).toEqual(new Set([401]));

    // Its own 600 requests in the minute all pass, from a single address (successes do not count
    // against an address), and the 601st is refused from any address.
    const good = await burst(600, () => post("/oauth/token", { grant_type: "client_credentials" }, { authorization: basic(app.client_id, client_secret!), "x-forwarded-for": "192.0.2.30" }));
    expect(new Set(good)).toEqual(new Set([200]));
    const over = await post("/oauth/token", { grant_type: "client_credentials" }, { authorization: basic(app.client_id, client_secret!), "x-forwarded-for": "192.0.2.31" });
    await expectOAuthError(over, 429, "slow_down");
    const retryAfter = Number(over.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The same client spelled differently in HTTP Basic (RFC 6749 §2.3.1 form-encodes it) is the same window.
    const respelledId = `%${app.client_id.charCodeAt(0).toString(16).toUpperCase()}${app.client_id.slice(1)}`;
    const respelled = `Basic ${Buffer.from(`${respelledId}:${client_secret!}`).toString("base64")}`;
    await expectOAuthError(await post("/oauth/token", { grant_type: "client_credentials" }, { authorization: respelled, "x-forwarded-for": "192.0.2.32" }), 429, "slow_down");
    // The address that sent the 600 is not held up for other clients.
    await expectOAuthError(await post("/oauth/token", { grant_type: "password", client_id: "demo-none" }, { "x-forwarded-for": "192.0.2.30" }), 401, "invalid_client");
  });

  it("answers the 601st failed request in a minute from one address with 429 slow_down, whatever client it names, valid or not", { timeout: 120_000 }, async () => {
    await startOfMinute();
    const app = await publicAppWithAthlete("Shared Address");
    const address = "203.0.113.200";
    const statuses = await burst(600, (i) => post("/oauth/token", { grant_type: "password", client_id: `guess-${i}` }, { "x-forwarded-for": address }));
    expect(new Set(statuses)).toEqual(new Set([401]));
    const res = await post("/oauth/token", { grant_type: "refresh_token", refresh_token: app.refreshToken, client_id: app.clientId }, { "x-forwarded-for": address });
    await expectOAuthError(res, 429, "slow_down");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Refused before any work: the refresh token was not used up.
    const elsewhere = await post("/oauth/token", { grant_type: "refresh_token", refresh_token: app.refreshToken, client_id: app.clientId }, { "x-forwarded-for": "192.0.2.40" });
    expect(elsewhere.status).toBe(200);
  });

  it("/oauth/revoke counts a proven client in a window of its own: revoking many tokens does not spend the token endpoint's", { timeout: 120_000 }, async () => {
    await withTokenLimit(5, async () => {
      await startOfMinute(30);
      const developer = await api.person();
      const { app, client_secret } = await inWriteCtx(session(developer.id), (ctx) => registerApp({ ctx, input: { name: "Signs out", kind: "confidential", redirect_uris: ["https://out.example/cb"] } }));
      const auth = { authorization: basic(app.client_id, client_secret!), "x-forwarded-for": "192.0.2.90" };
      for (let i = 0; i < 5; i++) expect((await post("/oauth/revoke", { token: `aas_rt_gone${i}` }, auth)).status, `revoke ${i + 1}`).toBe(200);
      await expectOAuthError(await post("/oauth/revoke", { token: "aas_rt_one-more" }, auth), 429, "slow_down");
      // The token endpoint's window for the same client is untouched.
      expect((await post("/oauth/token", { grant_type: "client_credentials" }, auth)).status).toBe(200);
    });
  });

  it("an app pressing on past its own window is refused without spending its address's: other clients behind that address go on", { timeout: 120_000 }, async () => {
    await withTokenLimit(5, async () => {
      await startOfMinute(30);
      const developer = await api.person();
      const register = (name: string) =>
        inWriteCtx(session(developer.id), (ctx) => registerApp({ ctx, input: { name, kind: "confidential", redirect_uris: ["https://shared.example/cb"] } }));
      const busy = await register("Busy");
      const other = await register("Neighbour");
      const from = (app: typeof busy) => ({ authorization: basic(app.app.client_id, app.client_secret!), "x-forwarded-for": "192.0.2.110" });
      for (let i = 0; i < 5; i++) expect((await post("/oauth/token", { grant_type: "client_credentials" }, from(busy))).status, `token ${i + 1}`).toBe(200);
      // Ten more than its window, at both endpoints: each refused.
      for (let i = 0; i < 5; i++) await expectOAuthError(await post("/oauth/token", { grant_type: "client_credentials" }, from(busy)), 429, "slow_down");
      for (let i = 0; i < 5; i++) expect((await post("/oauth/revoke", { token: `aas_rt_gone${i}` }, from(busy))).status, `revoke ${i + 1}`).toBe(200);
      for (let i = 0; i < 5; i++) await expectOAuthError(await post("/oauth/revoke", { token: "aas_rt_more" }, from(busy)), 429, "slow_down");
      // Another app at the same address is served.
      expect((await post("/oauth/token", { grant_type: "client_credentials" }, from(other))).status).toBe(200);
      // Failures still count there: five wrong secrets, and the address's window is full.
      for (let i = 0; i < 5; i++) {
        const res = await post("/oauth/token", { grant_type: "client_credentials" }, { ...from(other), authorization: basic(other.app.client_id, `aas_cs_wrong${i}`) });
        expect(res.status).toBe(401);
      }
      await expectOAuthError(await post("/oauth/token", { grant_type: "client_credentials" }, from(other)), 429, "slow_down");
    });
  });

  it("/oauth/revoke counts the same way: unknown tokens against the address, not the public client", { timeout: 120_000 }, async () => {
    await startOfMinute();
    const app = await publicAppWithAthlete("Revoked Often");
    const statuses = await burst(650, (i) => post("/oauth/revoke", { token: `aas_rt_unknown${i}`, client_id: app.clientId }, { "x-forwarded-for": `198.51.100.${100 + (i % 50)}` }));
    expect(new Set(statuses)).toEqual(new Set([200]));
    const res = await post("/oauth/token", { grant_type: "refresh_token", refresh_token: app.refreshToken, client_id: app.clientId }, { "x-forwarded-for": "192.0.2.50" });
    expect(res.status).toBe(200);
  });
});

describe("request bodies", () => {
  /** A body of `totalBytes` sent in chunks with no Content-Length; counts what the client produced. */
  function endless(totalBytes: number) {
    const chunk = new TextEncoder().encode("a".repeat(64 * 1024));
    const state = { produced: 0, finished: false, stop: false };
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (state.stop || state.produced >= totalBytes) {
          state.finished = state.produced >= totalBytes;
          controller.close();
          return;
        }
        controller.enqueue(state.produced === 0 ? new TextEncoder().encode("grant_type=client_credentials&x=") : chunk);
        state.produced += chunk.byteLength;
      },
    });
    return { stream, state };
  }

  for (const path of ["/oauth/token", "/oauth/revoke"] as const) {
    it(`${path} refuses a chunked body past ${MAX_FORM_BYTES / 1024} KiB with 413 invalid_request as soon as the limit is passed, before the client has sent the rest`, { timeout: 60_000 }, async () => {
      const total = 64 * 1024 * 1024;
      const { stream, state } = endless(total);
      const res = await fetch(api.url + path, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic("demo-training-log", "aas_cs_x") },
        body: stream,
        // @ts-expect-error Node's fetch needs this for streamed bodies
        duplex: "half",
      });
      // The answer came while most of the body was still unsent: the server stopped reading at
      // the limit (what the client produced meanwhile is the limit plus socket buffers).
      const producedAtAnswer = state.produced;
      state.stop = true;
      expect(state.finished).toBe(false);
      expect(producedAtAnswer).toBeLessThan(total / 4);
      await expectOAuthError(res, 413, "invalid_request");
      expect(res.headers.get("cache-control")).toContain("no-store");
    });
  }

  it("refuses a declared Content-Length over the limit without reading the body", async () => {
    const res = await post("/oauth/token", { grant_type: "client_credentials", x: "a".repeat(MAX_FORM_BYTES) });
    await expectOAuthError(res, 413, "invalid_request");
  });

  it("reads a form of as many parameters as the limit holds in one pass, and finds a repeat at its end", async () => {
    // Each name's values looked up by `getAll`, which scans the whole form: some 11,000 names
    // held the thread 1.5 s a request, before any authentication.
    const many = Array.from({ length: 9_000 }, (_, i) => `${i.toString(36)}=1`).join("&");
    expect(many.length).toBeLessThan(MAX_FORM_BYTES - 100);
    const send = (body: string) =>
      fetch(api.url + "/oauth/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
    const lookups = vi.spyOn(URLSearchParams.prototype, "getAll");
    try {
      await expectOAuthError(await send(`grant_type=password&client_id=demo-none&${many}`), 401, "invalid_client");
      expect(lookups.mock.calls.length).toBeLessThan(10);
    } finally {
      lookups.mockRestore();
    }
    const repeated = await send(`grant_type=password&client_id=demo-none&${many}&grant_type=password`);
    expect(repeated.status).toBe(400);
    expect(await repeated.json()).toMatchObject({ error: "invalid_request", error_description: "grant_type was sent more than once." });
  });

  it("accepts a form just under the limit: it is the size that is refused", async () => {
    const body = new URLSearchParams({ grant_type: "password", client_id: "demo-none", pad: "" }).toString();
    const res = await fetch(api.url + "/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: body + "a".repeat(MAX_FORM_BYTES - body.length),
    });
    await expectOAuthError(res, 401, "invalid_client");
  });
});

describe("the limiter's memory while the database refuses its syncs", () => {
  // A database that refuses every statement: what a sync meets during an outage, or when a row
  // cannot be written.
  const down = { execute: () => Promise.reject(new Error("database is down")) } as unknown as Db;
  const window = (bucket: string) => ({ bucket, windowS: 60, limit: 600 });

  it("forgets a window once it has ended, even though its hits were never sent", async () => {
    const limiter = new TokenEndpointLimiter(down);
    const t0 = Math.floor(Date.now() / 60_000) * 60_000;
    for (let i = 0; i < 1_000; i++) limiter.hit(window(`oauth-token-addr:10.0.${i >> 8}.${i & 255}`), t0 + 1_000);
    await limiter.flush(t0 + 2_000);
    expect(limiter.size).toBe(1_000); // the window is still open: kept, to be sent later
    await limiter.flush(t0 + 61_000);
    expect(limiter.size).toBe(0);
  });

  it(`keeps at most ${TOKEN_LIMIT_MAX_WINDOWS} windows, however many addresses call within one`, async () => {
    const limiter = new TokenEndpointLimiter(down);
    const t0 = Math.floor(Date.now() / 60_000) * 60_000;
    for (let i = 0; i < TOKEN_LIMIT_MAX_WINDOWS + 5_000; i++) limiter.hit(window(`oauth-token-addr:2001:db8::${i.toString(16)}`), t0 + 1_000);
    expect(limiter.size).toBe(TOKEN_LIMIT_MAX_WINDOWS);
    await limiter.flush(t0 + 2_000);
    expect(limiter.size).toBe(TOKEN_LIMIT_MAX_WINDOWS);
  });
});

describe("other methods on the OAuth endpoints", () => {
  it("answer 405 with Allow: POST and an RFC 6749 error body, which a browser app of any origin may read", async () => {
    for (const path of ["/oauth/token", "/oauth/revoke", "/oauth/register"]) {
      for (const method of ["GET", "PUT", "PATCH", "DELETE"]) {
        const res = await fetch(api.url + path, { method, headers: { origin: "https://app.example" } });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get("allow")).toBe("POST");
        expect(res.headers.get("access-control-allow-origin"), `${method} ${path}`).toBe("*");
        expect(await res.json()).toMatchObject({ error: "invalid_request" });
      }
    }
  });
});
