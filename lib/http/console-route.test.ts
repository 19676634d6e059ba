import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { sessionCookieFor } from "../auth/test-session";
import { activities, idempotencyKeys, oauthClients, teams, webhookSubscriptions } from "../db/schema";
import { unseal } from "../crypto/seal";
import { sha256Hex } from "../crypto/random";
import { resetEnvForTests } from "../env";
import { awayFromWindowEdge } from "../testing/clock";
import { setupApi } from "../testing/fixtures";
import { sendEndlessBody } from "../testing/endless-body";
import { countRows } from "../testing/rows";
import { handshakeThen, startReceiver } from "../testing/webhook-receiver";
import { CONSOLE_LIMIT_SCALE } from "./console-route";
import { MAX_BODY_BYTES } from "./body";
import { PAGE_PERSON_HEADER } from "./page-person";

const api = setupApi();
const receivers: { close: () => Promise<void> }[] = [];

afterEach(() => {
  delete process.env.RATE_LIMIT_15MIN;
  delete process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS;
  resetEnvForTests();
});
afterAll(async () => {
  for (const r of receivers) await r.close();
});

async function signedIn() {
  const person = await api.person();
  return { ...person, cookie: await sessionCookieFor(person.id) };
}

/** A console request as the console's own pages send it: the session cookie, and Origin on writes. */
function consoleCall(cookie: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fetch(api.url + path, {
    method,
    headers: {
      cookie,
      ...(method === "GET" ? {} : { origin: api.url }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Runs `fn` with this test's loopback peer named in TRUSTED_PROXIES, as a proxy in front of the service. */
async function behindTrustedProxy(fn: () => Promise<void>) {
  process.env.TRUSTED_PROXIES = "loopback";
  resetEnvForTests();
  try {
    await fn();
  } finally {
    delete process.env.TRUSTED_PROXIES;
    resetEnvForTests();
  }
}

function limitTo(n: number) {
  process.env.RATE_LIMIT_15MIN = String(n);
  resetEnvForTests();
}

describe("console routes: the signed-in session", () => {
  it("answers 401 token_missing without a session cookie or with one this service did not make", async () => {
    const res = await fetch(`${api.url}/api/console/profile`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: "token_missing" });
    // A session's challenge, not /v1's: no client is pointed at an OAuth resource's metadata here.
    expect(res.headers.get("www-authenticate")).toBe('Session realm="console"');
    const forged = await fetch(`${api.url}/api/console/profile`, { headers: { cookie: "authjs.session-token=eyJhbGciOiJub25lIn0.e30." } });
    expect(forged.status).toBe(401);
    const me = await signedIn();
    const ok = await consoleCall(me.cookie, "GET", "/api/console/profile");
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ id: me.id });
  });

  it("refuses, as an ended session (401), a page's request that names another person than the session's: someone else signed in in another tab", async () => {
    const me = await signedIn();
    const other = await signedIn();
    // The page was rendered for `me`; the browser's cookie is now `other`'s.
    const read = await consoleCall(other.cookie, "GET", "/api/console/profile", undefined, { [PAGE_PERSON_HEADER]: me.id });
    expect(read.status).toBe(401);
    expect(await read.json()).toMatchObject({ code: "token_invalid" });
    const run = { name: "Not theirs", sport_type: "run", start_local: "2026-01-02T07:00:00", elapsed_time_s: 600 };
    const write = await consoleCall(other.cookie, "POST", "/api/console/activities", run, { [PAGE_PERSON_HEADER]: me.id });
    expect(write.status).toBe(401);
    expect(await countRows(activities, eq(activities.athleteId, other.id))).toBe(0);
    // The same write from a page of the person signed in is made.
    expect((await consoleCall(other.cookie, "POST", "/api/console/activities", run, { [PAGE_PERSON_HEADER]: other.id })).status).toBe(201);
    // The page of the person signed in is served, and so is a request that names nobody.
    const own = await consoleCall(other.cookie, "GET", "/api/console/profile", undefined, { [PAGE_PERSON_HEADER]: other.id });
    expect(await own.json()).toMatchObject({ id: other.id });
    expect((await consoleCall(other.cookie, "GET", "/api/console/profile")).status).toBe(200);
  });
});

describe("console routes: a create sent again after a lost answer is made once (Idempotency-Key)", () => {
  it("answers the same activity again, marked replayed; the same key with another body is 422; without a key each is its own", async () => {
    const me = await signedIn();
    const run = { name: "Tempo", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 };
    const before = await countRows(activities, eq(activities.athleteId, me.id));
    const first = await consoleCall(me.cookie, "POST", "/api/console/activities", run, { "idempotency-key": "form-1.abc" });
    expect(first.status).toBe(201);
    const again = await consoleCall(me.cookie, "POST", "/api/console/activities", run, { "idempotency-key": "form-1.abc" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(((await again.json()) as { id: string }).id).toBe(((await first.json()) as { id: string }).id);
    expect(await countRows(activities, eq(activities.athleteId, me.id))).toBe(before + 1);
    const other = await consoleCall(me.cookie, "POST", "/api/console/activities", { ...run, name: "Other" }, { "idempotency-key": "form-1.abc" });
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: "idempotency_key_reused" });
    for (let i = 0; i < 2; i++) expect((await consoleCall(me.cookie, "POST", "/api/console/activities", run)).status).toBe(201);
    expect(await countRows(activities, eq(activities.athleteId, me.id))).toBe(before + 3);
  });
});

describe("console routes: an invitation or a delete sent again after a lost answer (Idempotency-Key, as /v1's)", () => {
  it("answers the invitation it made, not 409 'already invited'; a malformed key is refused and changes nothing", async () => {
    const coach = await signedIn();
    const athlete = await signedIn();
    const team = await consoleCall(coach.cookie, "POST", "/api/console/teams", { name: "Tuesday track" });
    expect(team.status).toBe(201);
    const teamId = ((await team.json()) as { id: string }).id;
    const invite = (key: string) => consoleCall(coach.cookie, "POST", `/api/console/teams/${teamId}/invitations`, { email: athlete.email }, { "idempotency-key": key });
    const bad = await invite("not a key");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: "invalid_request", errors: [expect.objectContaining({ field: "Idempotency-Key" })] });
    const first = await invite("invite-1.abc");
    expect(first.status).toBe(201);
    const again = await invite("invite-1.abc");
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
    // Without the key, the same invitation again is refused as made already.
    expect((await consoleCall(coach.cookie, "POST", `/api/console/teams/${teamId}/invitations`, { email: athlete.email })).status).toBe(409);
  });

  it("answers a delete of an activity again as it did (200), not 404", async () => {
    const me = await signedIn();
    const run = { name: "Easy", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 };
    const made = await consoleCall(me.cookie, "POST", "/api/console/activities", run);
    const { id } = (await made.json()) as { id: string };
    const del = () => consoleCall(me.cookie, "DELETE", `/api/console/activities/${id}`, undefined, { "idempotency-key": "delete-1" });
    const first = await del();
    expect(first.status).toBe(200);
    const again = await del();
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await countRows(activities, eq(activities.id, id))).toBe(0);
    expect((await consoleCall(me.cookie, "DELETE", `/api/console/activities/${id}`)).status).toBe(404);
  });
});

describe("console routes: adding a webhook endpoint sent again after a lost answer", () => {
  it("makes one subscription and answers its secret again, marked replayed, with one handshake", async () => {
    process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
    const me = await signedIn();
    const clientId = `ci-${randomBytes(4).toString("hex")}`;
    await (await api.db())
      .insert(oauthClients)
      .values({ clientId, ownerId: me.id, name: "Console app", kind: "public", redirectUris: ["https://app.example.com/cb"] });
    const receiver = await startReceiver(handshakeThen(() => 200));
    receivers.push(receiver);
    const body = { url: receiver.url, events: ["activity.created"] };
    const path = `/api/console/apps/${clientId}/webhooks`;
    const first = await consoleCall(me.cookie, "POST", path, body, { "idempotency-key": "endpoint-1.abc" });
    expect(first.status, await first.clone().text()).toBe(201);
    const again = await consoleCall(me.cookie, "POST", path, body, { "idempotency-key": "endpoint-1.abc" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
    expect(await countRows(webhookSubscriptions, eq(webhookSubscriptions.clientId, clientId))).toBe(1);
    expect(receiver.requests).toHaveLength(1);
  });
});

describe("console routes: a token or app created again after a lost answer (CONTRACT §6: their secrets are kept only as hashes)", () => {
  /** Every stored answer opened as a replay would open it: no secret shown once may be in one. */
  async function storedAnswers(principal: string): Promise<string> {
    const rows = await (await api.db()).select().from(idempotencyKeys).where(eq(idempotencyKeys.principal, principal));
    return rows.map((r) => unseal((r.responseBody as { sealed: string }).sealed)).join("\n");
  }
  const bearerStatus = async (token: string) => (await api.call(token, "GET", "/v1/athletes/me")).status;

  it("a personal access token: its stored answer holds no token; a replay issues the same token row a new secret, and the lost one stops working", async () => {
    const me = await signedIn();
    const body = { name: "Laptop", scopes: ["athlete.read"], expires_in_days: null };
    const first = await consoleCall(me.cookie, "POST", "/api/console/tokens", body, { "idempotency-key": "pat-1.abc" });
    expect(first.status).toBe(201);
    const made = (await first.json()) as { token: string; summary: { id: string; display: string } };
    expect(await storedAnswers(`console:${me.id}`)).not.toContain(made.token);
    expect(await bearerStatus(made.token)).toBe(200);

    const again = await consoleCall(me.cookie, "POST", "/api/console/tokens", body, { "idempotency-key": "pat-1.abc" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const replayed = (await again.json()) as typeof made;
    expect(replayed.summary.id).toBe(made.summary.id);
    expect(replayed.token).toMatch(/^aas_pat_/);
    expect(replayed.token).not.toBe(made.token);
    expect(replayed.summary.display).toBe(`aas_pat_…${replayed.token.slice(-4)}`);
    expect(await bearerStatus(replayed.token)).toBe(200);
    expect(await bearerStatus(made.token)).toBe(401);
    expect(await storedAnswers(`console:${me.id}`)).not.toContain(replayed.token);

    // Revoked since: nothing to issue again.
    expect((await consoleCall(me.cookie, "DELETE", `/api/console/tokens/${made.summary.id}`)).status).toBe(200);
    const late = await consoleCall(me.cookie, "POST", "/api/console/tokens", body, { "idempotency-key": "pat-1.abc" });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ code: "conflict" });
  });

  it("an app: its stored answer holds no client secret; a replay rotates the secret of the same app, and one deleted since is 409", async () => {
    const me = await signedIn();
    const body = { name: "Replay app", kind: "confidential", redirect_uris: ["https://replay.example.com/cb"] };
    const first = await consoleCall(me.cookie, "POST", "/api/console/apps", body, { "idempotency-key": "app-1.abc" });
    expect(first.status, await first.clone().text()).toBe(201);
    const made = (await first.json()) as { app: { client_id: string }; client_secret: string };
    expect(made.client_secret).toMatch(/^aas_cs_/);
    expect(await storedAnswers(`console:${me.id}`)).not.toContain(made.client_secret);

    const again = await consoleCall(me.cookie, "POST", "/api/console/apps", body, { "idempotency-key": "app-1.abc" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const replayed = (await again.json()) as typeof made;
    expect(replayed.app.client_id).toBe(made.app.client_id);
    expect(replayed.client_secret).toMatch(/^aas_cs_/);
    expect(replayed.client_secret).not.toBe(made.client_secret);
    const [row] = await (await api.db()).select().from(oauthClients).where(eq(oauthClients.clientId, made.app.client_id));
    expect(row!.secretHash).toBe(sha256Hex(replayed.client_secret));
    expect(await countRows(oauthClients, eq(oauthClients.ownerId, me.id))).toBe(1);

    expect((await consoleCall(me.cookie, "DELETE", `/api/console/apps/${made.app.client_id}`)).status).toBe(200);
    const late = await consoleCall(me.cookie, "POST", "/api/console/apps", body, { "idempotency-key": "app-1.abc" });
    expect(late.status).toBe(409);
  });
});

describe("console routes: a window per signed-in person (CONTRACT §10)", () => {
  // Each test fills a 15-minute window and expects the next request refused.
  beforeEach(() => awayFromWindowEdge());

  it("answers 429 rate_limited with Retry-After once a person used their window (CONSOLE_LIMIT_SCALE times an app's); another person is not affected", async () => {
    limitTo(2);
    const me = await signedIn();
    const other = await signedIn();
    for (let i = 0; i < 2 * CONSOLE_LIMIT_SCALE; i++) expect((await consoleCall(me.cookie, "GET", "/api/console/profile")).status).toBe(200);
    const refused = await consoleCall(me.cookie, "GET", "/api/console/profile");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("ratelimit")).toContain('"15min";r=0');
    expect(await refused.json()).toMatchObject({ status: 429, code: "rate_limited" });
    expect((await consoleCall(other.cookie, "GET", "/api/console/profile")).status).toBe(200);
  });

  it("refuses before the slow work: past the window, creating a webhook runs no handshake and creates nothing", async () => {
    process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
    limitTo(1);
    const me = await signedIn();
    const clientId = `cr-${randomBytes(4).toString("hex")}`;
    await (await api.db())
      .insert(oauthClients)
      .values({ clientId, ownerId: me.id, name: "Console app", kind: "public", redirectUris: ["https://app.example.com/cb"] });
    const receiver = await startReceiver(handshakeThen(() => 200));
    receivers.push(receiver);
    const subscribe = () =>
      consoleCall(me.cookie, "POST", `/api/console/apps/${clientId}/webhooks`, { url: receiver.url, events: ["activity.created"] });

    // All of the window but one place, spent on reads.
    for (let i = 0; i < CONSOLE_LIMIT_SCALE - 1; i++) expect((await consoleCall(me.cookie, "GET", "/api/console/profile")).status).toBe(200);
    const first = await subscribe();
    expect(first.status, await first.clone().text()).toBe(201);
    expect(receiver.requests).toHaveLength(1);
    const second = await subscribe();
    expect(second.status).toBe(429);
    // The handshake would have been answered before the 429 was: none was sent.
    expect(receiver.requests).toHaveLength(1);
  });

  it("counts writes too: past the window, a write creates nothing", async () => {
    limitTo(2);
    const me = await signedIn();
    const create = () => consoleCall(me.cookie, "POST", "/api/console/teams", { name: `Team ${randomBytes(3).toString("hex")}` });
    for (let i = 0; i < 2 * CONSOLE_LIMIT_SCALE - 2; i++) expect((await consoleCall(me.cookie, "GET", "/api/console/profile")).status).toBe(200);
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(429);
    expect(await countRows(teams, eq(teams.createdBy, me.id))).toBe(2);
  });

  it("reads X-Forwarded-Host only from a trusted proxy: a client's own cannot make another site's Origin match", async () => {
    const me = await signedIn();
    const forged = { origin: "https://evil.example", "x-forwarded-host": "evil.example" };
    const refused = await consoleCall(me.cookie, "POST", "/api/console/teams", { name: "Forged" }, forged);
    expect(refused.status).toBe(400);
    expect(await countRows(teams, eq(teams.createdBy, me.id))).toBe(0);
    // Through a proxy named in TRUSTED_PROXIES (this test's loopback peer), the header is the proxy's word.
    await behindTrustedProxy(async () => {
      const proxied = await consoleCall(me.cookie, "POST", "/api/console/teams", { name: "Proxied" }, forged);
      expect(proxied.status, await proxied.clone().text()).toBe(201);
    });
  });

  it("counts the Origin's scheme: https://host is not http://host's origin (a trusted proxy's X-Forwarded-Proto says which the browser used)", async () => {
    const me = await signedIn();
    const otherScheme = { origin: api.url.replace(/^http:/, "https:") };
    const refused = await consoleCall(me.cookie, "POST", "/api/console/teams", { name: "Scheme" }, otherScheme);
    expect(refused.status).toBe(400);
    expect(await countRows(teams, eq(teams.createdBy, me.id))).toBe(0);
    // Behind a proxy that ends TLS: the browser's https is the proxy's word, and its http would be another origin.
    await behindTrustedProxy(async () => {
      const proxied = await consoleCall(me.cookie, "POST", "/api/console/teams", { name: "Behind TLS" }, { ...otherScheme, "x-forwarded-proto": "https" });
      expect(proxied.status, await proxied.clone().text()).toBe(201);
      const plain = await consoleCall(me.cookie, "POST", "/api/console/teams", { name: "Plain" }, { origin: api.url, "x-forwarded-proto": "https" });
      expect(plain.status).toBe(400);
    });
    expect(await countRows(teams, eq(teams.createdBy, me.id))).toBe(1);
  });

  it("refuses a cross-site write before counting it, so another site cannot spend someone's window", async () => {
    limitTo(3);
    const me = await signedIn();
    for (let i = 0; i < 10; i++) {
      const res = await consoleCall(me.cookie, "POST", "/api/console/teams", { name: "Evil" }, { origin: "https://evil.example" });
      expect(res.status).toBe(400);
      expect((await res.json()).code).toBe("invalid_request");
    }
    for (let i = 0; i < 3 * CONSOLE_LIMIT_SCALE; i++) expect((await consoleCall(me.cookie, "GET", "/api/console/profile")).status).toBe(200);
  });
});

/** An endless JSON body ("{" then spaces) to a console path. */
function endlessBody(path: string, headers: Record<string, string>, giveUpBytes: number) {
  return sendEndlessBody(api.url + path, { headers, giveUpBytes, first: Buffer.from("{") });
}

describe("console routes: methods", () => {
  it("answer a method a path does not serve, and OPTIONS, with the path's own Allow and no CORS (only the console's pages call them)", async () => {
    const me = await signedIn();
    const allow = "GET, PATCH, HEAD, OPTIONS";
    const options = await consoleCall(me.cookie, "OPTIONS", "/api/console/profile");
    expect(options.status).toBe(204);
    expect(options.headers.get("allow")).toBe(allow);
    for (const method of ["PUT", "DELETE", "PROPFIND"]) {
      const res = await consoleCall(me.cookie, method, "/api/console/profile", method === "PUT" ? { name: "x" } : undefined);
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow"), method).toBe(allow);
      expect(await res.json()).toMatchObject({ code: "method_not_allowed", detail: `${method} is not served here; this path serves ${allow}.` });
    }
    for (const res of [options, await consoleCall(me.cookie, "PUT", "/api/console/profile", { name: "x" }), await consoleCall(me.cookie, "GET", "/api/console/nothing")]) {
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(res.headers.get("ratelimit")).toBeNull();
    }
  });
});

describe("console routes: path parameters", () => {
  it("answer an id PostgreSQL cannot store (a NUL) as an unknown id, 404 not_found, as /v1 does", async () => {
    const me = await signedIn();
    const res = await consoleCall(me.cookie, "GET", "/api/console/apps/%00/usage");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: "not_found", detail: "No resource at this path: client_id is not an id this API makes." });
    const patch = await consoleCall(me.cookie, "PATCH", "/api/console/activities/%00", { name: "x" });
    expect(patch.status).toBe(404);
    expect(await patch.json()).toMatchObject({ code: "not_found" });
  });

  it("answer an id longer than any this service makes as a path that names nothing, before any query, without repeating it", async () => {
    const me = await signedIn();
    const long = "x".repeat(6000);
    for (const [method, path] of [
      ["GET", `/api/console/apps/${long}`],
      ["GET", `/api/console/activities/${long}`],
      ["DELETE", `/api/console/tokens/${long}`],
      ["DELETE", `/api/console/teams/team_x/members/${long}`],
      ["DELETE", `/api/console/teams/team_x/invitations/${long}%40example.com`],
    ] as const) {
      const res = await consoleCall(me.cookie, method, path);
      const text = await res.text();
      expect(res.status, path.slice(0, 40)).toBe(404);
      expect(text.length, path.slice(0, 40)).toBeLessThan(500);
      expect(text).not.toContain("x".repeat(100));
    }
  });

  it("answer a 404 problem for a console path that does not exist", async () => {
    const me = await signedIn();
    for (const path of ["/api/console/nothing-here", "/api/console/apps/x/y/z/w", "/api/console", "/api/console/activities/%2e%2e"]) {
      const res = await consoleCall(me.cookie, "GET", path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toMatchObject({ code: "not_found" });
    }
  });
});

describe("console routes: bodies", () => {
  it("stop reading a chunked body past 1 MiB and answer 413 payload_too_large, then close, without reading it all", async () => {
    const me = await signedIn();
    const giveUp = 256 * MAX_BODY_BYTES;
    const result = await endlessBody(
      "/api/console/teams",
      { cookie: me.cookie, origin: api.url, "content-type": "application/json", "transfer-encoding": "chunked" },
      giveUp,
    );
    // 1 MiB read, at most 8 MiB more drained, and what the sockets' buffers hold; then the
    // answer, with the connection closed after it (never a reset in its place).
    expect(result.sent, "the server kept reading").toBeLessThan(32 * MAX_BODY_BYTES);
    expect(result).toMatchObject({ closed: false, status: 413 });
    expect(JSON.parse(result.body!)).toMatchObject({ code: "payload_too_large" });
  });
});

describe("console routes: parsing and answers, as /v1's", () => {
  it("answer a bad body or query with a 400 problem whose errors[] names the field", async () => {
    const me = await signedIn();
    const cases: [string, string, unknown, string][] = [
      ["POST", "/api/console/teams", { name: "" }, "name"],
      ["POST", "/api/console/teams", { name: "Squad", colour: "red" }, "colour"],
      ["GET", "/api/console/activities?limit=0", undefined, "limit"],
      ["GET", `/api/console/apps/x/webhooks/y/deliveries?status=lost`, undefined, "status"],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await consoleCall(me.cookie, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      const problem = (await res.json()) as { status: number; errors: { field: string }[] };
      expect(problem.status).toBe(400);
      expect(problem.errors.map((e) => e.field), `${method} ${path}`).toContain(field);
    }
    expect(await countRows(teams, eq(teams.createdBy, me.id))).toBe(0);
  });

  it("serve every console route with its status and the answer its schema shapes", async () => {
    process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
    resetEnvForTests();
    const me = await signedIn();
    const member = await signedIn();
    const call = async (method: string, path: string, status: number, body?: unknown, who = me) => {
      const res = await consoleCall(who.cookie, method, path, body);
      const text = await res.text();
      expect(res.status, `${method} ${path}: ${text}`).toBe(status);
      expect(res.headers.get("content-type"), `${method} ${path}`).toBe("application/json");
      expect(res.headers.get("cache-control")).toBe("no-store");
      return JSON.parse(text) as Record<string, unknown> & { id: string };
    };

    expect(await call("GET", "/api/console/profile", 200)).toMatchObject({ id: me.id });
    expect(await call("PATCH", "/api/console/profile", 200, { uses_metric_units: false })).toMatchObject({ uses_metric_units: false });

    const activity = await call("POST", "/api/console/activities", 201, {
      name: "Run",
      sport_type: "run",
      start_local: "2026-03-01T07:00:00",
      elapsed_time_s: 1200,
    });
    expect(await call("GET", "/api/console/activities?limit=5", 200)).toMatchObject({ data: [{ id: activity.id }], next_cursor: null });
    expect(await call("GET", `/api/console/activities/${activity.id}`, 200)).toMatchObject({ id: activity.id, name: "Run" });
    expect(await call("PATCH", `/api/console/activities/${activity.id}`, 200, { name: "Long run" })).toMatchObject({ name: "Long run" });

    const team = await call("POST", "/api/console/teams", 201, { name: "Squad" });
    expect(team).toEqual({ id: team.id, name: "Squad", role: "coach" });
    expect(await call("POST", `/api/console/teams/${team.id}/invitations`, 201, { email: member.email })).toMatchObject({ status: "invited" });
    expect(await call("GET", "/api/console/memberships", 200, undefined, member)).toMatchObject({ invitations: [{ team_id: team.id }] });
    expect(await call("POST", `/api/console/invitations/${team.id}`, 200, undefined, member)).toMatchObject({ team_id: team.id, team_name: "Squad" });
    expect(await call("GET", "/api/console/teams", 200)).toMatchObject([{ id: team.id }]);
    await call("POST", `/api/console/teams/${team.id}/invitations`, 201, { email: (await signedIn()).email });
    const third = await signedIn();
    await call("POST", `/api/console/teams/${team.id}/invitations`, 201, { email: third.email });
    expect(await call("DELETE", `/api/console/invitations/${team.id}`, 200, undefined, third)).toBeNull();

    const pat = await call("POST", "/api/console/tokens", 201, { name: "CLI", scopes: ["athlete.read"], expires_in_days: 7 });
    const summary = pat.summary as { id: string };
    expect(pat.token).toMatch(/^aas_pat_/);
    expect(await call("GET", "/api/console/tokens", 200)).toMatchObject([{ id: summary.id, revoked_at: null }]);
    expect((await call("DELETE", `/api/console/tokens/${summary.id}`, 200)).revoked_at).toEqual(expect.any(String));

    const registered = await call("POST", "/api/console/apps", 201, { name: "Log", kind: "confidential", redirect_uris: ["https://log.example/cb"] });
    const app = registered.app as { client_id: string };
    expect(registered.client_secret).toEqual(expect.any(String));
    expect(await call("GET", "/api/console/apps", 200)).toMatchObject([{ client_id: app.client_id }]);
    expect(await call("GET", `/api/console/apps/${app.client_id}`, 200)).toMatchObject({ client_id: app.client_id, connected_athletes: 0 });
    expect(await call("PATCH", `/api/console/apps/${app.client_id}`, 200, { name: "Training Log" })).toMatchObject({ name: "Training Log" });
    expect((await call("POST", `/api/console/apps/${app.client_id}/rotate-secret`, 200)).client_secret).not.toBe(registered.client_secret);
    expect(await call("GET", `/api/console/apps/${app.client_id}/usage`, 200)).toMatchObject({ client_id: app.client_id });
    expect(await call("GET", "/api/console/connected-apps", 200)).toEqual([]);

    const receiver = await startReceiver(handshakeThen(() => 200));
    receivers.push(receiver);
    const hooks = `/api/console/apps/${app.client_id}/webhooks`;
    const sub = await call("POST", hooks, 201, { url: receiver.url, events: ["activity.created"] });
    expect(sub.secret).toEqual(expect.any(String));
    expect(await call("GET", hooks, 200)).toMatchObject({ data: [{ id: sub.id }], next_cursor: null });
    expect(await call("GET", `${hooks}/${sub.id}`, 200)).toMatchObject({ id: sub.id, status: "active" });
    expect(await call("PATCH", `${hooks}/${sub.id}`, 200, { events: ["activity.created", "activity.updated"] })).toMatchObject({ id: sub.id });
    expect((await call("POST", `${hooks}/${sub.id}/rotate-secret`, 200)).secret).not.toBe(sub.secret);
    const delivery = await call("POST", `${hooks}/${sub.id}/send-test-event`, 202);
    expect(await call("GET", `${hooks}/${sub.id}/deliveries`, 200)).toMatchObject({ data: [{ id: delivery.id }] });
    expect(await call("GET", `${hooks}/${sub.id}/deliveries/${delivery.id}`, 200)).toMatchObject({ id: delivery.id });
    expect(await call("POST", `${hooks}/${sub.id}/deliveries/${delivery.id}/redeliver`, 202)).toMatchObject({ id: delivery.id });
    expect(await call("DELETE", `${hooks}/${sub.id}`, 200)).toBeNull();
    expect(await call("DELETE", `/api/console/apps/${app.client_id}`, 200)).toEqual({ client_id: app.client_id, deleted: true });
  });
});
