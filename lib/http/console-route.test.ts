import { afterAll, afterEach, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { sessionCookieFor } from "../auth/test-session";
import { oauthClients, teams } from "../db/schema";
import { resetEnvForTests } from "../env";
import { setupApi } from "../testing/fixtures";
import { sendEndlessBody } from "../testing/endless-body";
import { countRows } from "../testing/rows";
import { startReceiver } from "../testing/webhook-receiver";
import { MAX_BODY_BYTES } from "./body";

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

function limitTo(n: number) {
  process.env.RATE_LIMIT_15MIN = String(n);
  resetEnvForTests();
}

describe("console routes: the signed-in session", () => {
  it("answers 401 token_missing without a session cookie or with one this service did not make", async () => {
    const res = await fetch(`${api.url}/api/console/profile`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: "token_missing" });
    const forged = await fetch(`${api.url}/api/console/profile`, { headers: { cookie: "authjs.session-token=eyJhbGciOiJub25lIn0.e30." } });
    expect(forged.status).toBe(401);
    const me = await signedIn();
    const ok = await consoleCall(me.cookie, "GET", "/api/console/profile");
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ id: me.id });
  });
});

describe("console routes: a window per signed-in person (CONTRACT §10)", () => {
  it("answers 429 rate_limited with Retry-After once a person used their window; another person is not affected", async () => {
    limitTo(4);
    const me = await signedIn();
    const other = await signedIn();
    for (let i = 0; i < 4; i++) expect((await consoleCall(me.cookie, "GET", "/api/console/profile")).status).toBe(200);
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
    const receiver = await startReceiver((r) => ({
      status: 200,
      body: JSON.stringify({ "hub.challenge": new URL(r.url, "http://x").searchParams.get("hub.challenge") }),
      headers: { "content-type": "application/json" },
    }));
    receivers.push(receiver);
    const subscribe = () =>
      consoleCall(me.cookie, "POST", `/api/console/apps/${clientId}/webhooks`, { url: receiver.url, events: ["activity.created"] });

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
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(429);
    expect(await countRows(teams, eq(teams.createdBy, me.id))).toBe(2);
  });

  it("refuses a cross-site write before counting it, so another site cannot spend someone's window", async () => {
    limitTo(3);
    const me = await signedIn();
    for (let i = 0; i < 10; i++) {
      const res = await consoleCall(me.cookie, "POST", "/api/console/teams", { name: "Evil" }, { origin: "https://evil.example" });
      expect(res.status).toBe(400);
      expect((await res.json()).code).toBe("invalid_request");
    }
    for (let i = 0; i < 3; i++) expect((await consoleCall(me.cookie, "GET", "/api/console/profile")).status).toBe(200);
  });
});

/** An endless JSON body ("{" then spaces) to a console path. */
function endlessBody(path: string, headers: Record<string, string>, giveUpBytes: number) {
  return sendEndlessBody(api.url + path, { headers, giveUpBytes, first: Buffer.from("{") });
}

describe("console routes: path parameters", () => {
  it("refuse text PostgreSQL cannot store with 400 invalid_request, as /v1 does", async () => {
    const me = await signedIn();
    const res = await consoleCall(me.cookie, "GET", "/api/console/apps/%00/usage");
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "invalid_request", errors: [{ field: "client_id" }] });
  });

  it("answer a 404 problem for a console path that does not exist", async () => {
    const me = await signedIn();
    for (const path of ["/api/console/nothing-here", "/api/console/apps/x/y/z/w"]) {
      const res = await consoleCall(me.cookie, "GET", path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toMatchObject({ code: "not_found" });
    }
  });
});

describe("console routes: bodies", () => {
  it("stop reading a chunked body past 1 MiB and answer 413 payload_too_large (or close), without reading it all", async () => {
    const me = await signedIn();
    const giveUp = 256 * MAX_BODY_BYTES;
    const result = await endlessBody(
      "/api/console/teams",
      { cookie: me.cookie, origin: api.url, "content-type": "application/json", "transfer-encoding": "chunked" },
      giveUp,
    );
    // 1 MiB read, at most 8 MiB more drained so the 413 reaches a kept-alive client, and what
    // the sockets' buffers hold.
    expect(result.sent, "the server kept reading").toBeLessThan(32 * MAX_BODY_BYTES);
    if (!result.closed) {
      expect(result.status).toBe(413);
      expect(JSON.parse(result.body!)).toMatchObject({ code: "payload_too_large" });
    }
  });
});
