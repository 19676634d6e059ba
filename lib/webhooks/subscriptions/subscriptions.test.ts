import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { inWriteCtx } from "../../http/operation";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { sessionCookieFor } from "../../auth/test-session";
import { unseal } from "../../crypto/seal";
import { events, oauthGrants, oauthTokenFamilies, webhookAttempts, webhookDeliveries, webhookSubscriptions } from "../../db/schema";
import { resetEnvForTests } from "../../env";
import { ApiError } from "../../http/errors";
import { newId } from "../../ids";
import { issueAccessToken } from "../../oauth/access-token";
import { openApiDocument } from "../../openapi/document";
import { setupApi } from "../../testing/fixtures";
import { countRows } from "../../testing/rows";
import { isWellFormedToken } from "../../tokens/format";
import { disconnectApp } from "../../oauth-grants/disconnect-app";
import { fanOutEvents } from "../fan-out";
import { onWebhookWake } from "../wake";
import { createSubscription } from "./create-subscription";
import { getSubscription } from "./get-subscription";
import { listDeliveries } from "./list-deliveries";
import { CAPS } from "../../http/caps";
import { CreateSubscriptionInput, Delivery, DeliveryList, Subscription, SubscriptionList, SubscriptionWithSecret } from "./schemas";

const api = setupApi();

// ---------------------------------------------------------------------------------------------
// Receivers: real HTTP servers on loopback.

type Seen = { url: URL; method: string };
const servers: http.Server[] = [];

async function receiver(answer: (seen: Seen, res: http.ServerResponse) => void = echo): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const s = { url: new URL(req.url!, "http://127.0.0.1"), method: req.method! };
    seen.push(s);
    answer(s, res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, seen };
}
function echo(s: Seen, res: http.ServerResponse) {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ "hub.challenge": s.url.searchParams.get("hub.challenge") }));
}
const answering = (status: number, body: string) => (_s: Seen, res: http.ServerResponse) => res.writeHead(status).end(body);

async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

beforeAll(() => {
  process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
  resetEnvForTests();
});
afterEach(() => {
  process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
  resetEnvForTests();
});
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

// ---------------------------------------------------------------------------------------------
// Apps and their tokens.

type App = { clientId: string; ownerId: string; token: string };

/** A confidential app and a client-credentials token from POST /oauth/token (HTTP Basic), as an app gets one. */
async function registeredApp(): Promise<App> {
  const { clientId, ownerId, token } = await api.app({ name: "Hooks App" });
  return { clientId, ownerId, token };
}

async function expectProblem(res: Response, status: number, code: string) {
  expect(res.status, await res.clone().text()).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ status, code });
  return body;
}

async function subscribe(app: App, url: string, events: string[] = ["activity.created"], headers: Record<string, string> = {}) {
  const res = await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url, events }, headers });
  expect(res.status, await res.clone().text()).toBe(201);
  return SubscriptionWithSecret.parse(await res.json());
}

/** Validates a real answer against the OpenAPI document's schema for that operation and status. */
function matchesDocument(pathTemplate: string, method: string, status: number, contentType: string, body: unknown) {
  const pointer = ["paths", pathTemplate, method, "responses", String(status), "content", contentType, "schema"]
    .map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1"))
    .join("/");
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(openApiDocument(api.url) as object, "openapi");
  ajv.validate({ $ref: `openapi#/${pointer}` }, body);
  expect(ajv.errors ?? [], `${method} ${pathTemplate} ${status}`).toEqual([]);
}

// Deliveries as the delivery engine leaves them, written straight to the tables.
async function event(type = "activity.created", athleteId = "ath_x", over: Partial<typeof events.$inferInsert> = {}) {
  const [row] = await (await api.db())
    .insert(events)
    .values({ id: newId("evt"), type, athleteId, objectId: newId("act"), objectType: "activity", ...over })
    .returning();
  return row!;
}
/** A delivery of an event addressed to the subscription's app, which reaches it whoever its athlete is. */
async function delivery(subscriptionId: string, over: Partial<typeof webhookDeliveries.$inferInsert> = {}) {
  const e = await event("activity.created", "ath_x", { clientId: (await subscriptionRow(subscriptionId))!.clientId });
  const [row] = await (await api.db())
    .insert(webhookDeliveries)
    .values({ id: newId("whd"), subscriptionId, eventId: e.id, eventSeq: e.seq, ...over })
    .returning();
  return { delivery: row!, event: e };
}
async function attempt(deliveryId: string, n: number, over: Partial<typeof webhookAttempts.$inferInsert> = {}) {
  await (await api.db())
    .insert(webhookAttempts)
    .values({
      id: newId("wha"),
      deliveryId,
      attempt: n,
      startedAt: new Date(),
      durationMs: 12,
      outcome: "response",
      responseStatus: 500,
      responseBodyExcerpt: "oops",
      requestHeaders: { "content-type": "application/json", "service-signature": "t=1,v1=ab" },
      requestBody: '{"id":"evt_1"}',
      ...over,
    });
}
async function subscriptionRow(id: string) {
  const [row] = await (await api.db()).select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, id));
  return row;
}
async function deliveryRow(id: string) {
  const [row] = await (await api.db()).select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return row!;
}
async function setSubscription(id: string, set: Partial<typeof webhookSubscriptions.$inferInsert>) {
  await (await api.db()).update(webhookSubscriptions).set(set).where(eq(webhookSubscriptions.id, id));
}

/** Counts wakes of the delivery runner during `fn`. */
async function wakesDuring(fn: () => Promise<void>): Promise<number> {
  let n = 0;
  const off = onWebhookWake(() => n++);
  try {
    await fn();
  } finally {
    off();
  }
  return n;
}

// ---------------------------------------------------------------------------------------------

describe("POST /v1/app/webhooks", () => {
  it("runs the handshake inline and answers 201 with the subscription and its whsec_ secret, stored sealed", async () => {
    const app = await registeredApp();
    const r = await receiver();
    const res = await api.call(app.token, "POST", "/v1/app/webhooks", {
      body: { url: r.url, events: ["activity.created", "metric.created", "activity.created"], verify_token: "strava-style-token" },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, unknown>;
    matchesDocument("/v1/app/webhooks", "post", 201, "application/json", body);
    const sub = SubscriptionWithSecret.parse(body);
    expect(sub).toMatchObject({
      url: r.url,
      events: ["activity.created", "metric.created"],
      status: "active",
      consecutive_failures: 0,
      failing_since: null,
      disabled_at: null,
      disabled_reason: null,
    });
    expect(sub.id).toMatch(/^whs_[0-9A-Za-z]{22}$/);
    expect(res.headers.get("location")).toBe(`/v1/app/webhooks/${sub.id}`);
    expect(isWellFormedToken(sub.secret, "webhookSecret")).toBe(true);
    expect(Object.keys(body).sort()).toEqual(
      [
        "id", "url", "events", "status", "consecutive_failures", "failing_since", "disabled_at", "disabled_reason",
        "previous_secret_expires_at", "created_at", "updated_at", "secret",
      ].sort(),
    );

    expect(r.seen).toHaveLength(1);
    expect(r.seen[0]!.method).toBe("GET");
    expect(r.seen[0]!.url.searchParams.get("hub.mode")).toBe("subscribe");
    expect(r.seen[0]!.url.searchParams.get("hub.verify_token")).toBe("strava-style-token");

    const row = await subscriptionRow(sub.id);
    expect(row!.clientId).toBe(app.clientId);
    expect(row!.secretSealed).not.toContain(sub.secret);
    expect(unseal(row!.secretSealed)).toBe(sub.secret);

    // The secret is never shown again.
    const got = (await (await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}`)).json()) as Record<string, unknown>;
    expect(got.secret).toBeUndefined();
    expect(JSON.stringify(got)).not.toContain("whsec_");
  });

  it("keeps and shows the URL as it is requested, whatever the spelling it was sent in", async () => {
    const app = await registeredApp();
    const r = await receiver();
    const { port } = new URL(r.url);
    for (const [sent, called] of <[string, string][]>[
      [`HTTP://0x7f.1:${port}/Up`, `http://127.0.0.1:${port}/Up`],
      [`http://%31%32%37.0.0.1:${port}\\back`, `http://127.0.0.1:${port}/back`],
      [`http://127.0.0.1:${port}/h ook?a=b c`, `http://127.0.0.1:${port}/h%20ook?a=b%20c`],
      [`http://127.0.0.1:${port}`, `http://127.0.0.1:${port}/`],
    ]) {
      const res = await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: sent, events: ["activity.created"] } });
      expect(res.status, sent).toBe(201);
      const sub = SubscriptionWithSecret.parse(await res.json());
      expect(sub.url).toBe(called);
      expect((await subscriptionRow(sub.id))!.url).toBe(called);
      // The handshake went where the subscription says.
      expect(new URL(r.seen.at(-1)!.url.pathname, r.url).href).toBe(new URL(new URL(called).pathname, r.url).href);
    }
  });

  it("refuses a second subscription of the app to a URL it has, in any spelling, with 409 conflict on url, before any handshake", async () => {
    const app = await registeredApp();
    const r = await receiver();
    const first = await subscribe(app, r.url);
    const again = r.url.replace("http://127.0.0.1", "HTTP://127.0.0.1");
    const problem = await expectProblem(
      await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: again, events: ["metric.created"] } }),
      409,
      "conflict",
    );
    expect(problem.errors).toEqual([{ field: "url", code: "conflict", detail: `The app already has an endpoint at this URL (${first.id}): change its events instead.` }]);
    expect(r.seen).toHaveLength(1);
    expect(await countRows(webhookSubscriptions, eq(webhookSubscriptions.clientId, app.clientId))).toBe(1);
    // Nor may another subscription move there; another app may subscribe it.
    const other = await receiver();
    const second = await subscribe(app, other.url);
    await expectProblem(await api.call(app.token, "PATCH", `/v1/app/webhooks/${second.id}`, { body: { url: r.url } }), 409, "conflict");
    expect((await subscriptionRow(second.id))!.url).toBe(other.url);
    expect(r.seen).toHaveLength(1);
    const theirs = await registeredApp();
    expect((await api.call(theirs.token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: ["activity.created"] } })).status).toBe(201);
  });

  it("generates a verify token when none is sent", async () => {
    const app = await registeredApp();
    const r = await receiver();
    await subscribe(app, r.url);
    expect(r.seen[0]!.url.searchParams.get("hub.verify_token")).toMatch(/^[0-9A-Za-z]{24}$/);
  });

  it.each([
    ["a wrong challenge", (_s: Seen, res: http.ServerResponse) => res.writeHead(200, { "content-type": "application/json" }).end('{"hub.challenge":"nope"}'), "wrong_challenge", 200],
    ["a 404", answering(404, "Not Found"), "unexpected_status", 404],
    ["a 200 that is not JSON", answering(200, "ok"), "not_json", 200],
  ])("creates nothing and answers 400 webhook_verification_failed on %s, saying what the endpoint did", async (_name, answer, outcome, status) => {
    const app = await registeredApp();
    const r = await receiver(answer);
    const before = await countRows(webhookSubscriptions);
    const res = await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: ["activity.created"] } });
    const body = await expectProblem(res, 400, "webhook_verification_failed");
    matchesDocument("/v1/app/webhooks", "post", 400, "application/problem+json", body);
    expect(body.handshake).toMatchObject({ outcome, status, error: null });
    expect(body.detail).toMatch(/did not complete/);
    expect(await countRows(webhookSubscriptions)).toBe(before);
  });

  it("creates nothing when the connection is refused, and names the error", async () => {
    const app = await registeredApp();
    const before = await countRows(webhookSubscriptions);
    const res = await api.call(app.token, "POST", "/v1/app/webhooks", {
      body: { url: `http://127.0.0.1:${await closedPort()}/hooks`, events: ["activity.created"] },
    });
    const body = await expectProblem(res, 400, "webhook_verification_failed");
    expect(body.handshake).toMatchObject({ outcome: "not_sent", status: null, body_excerpt: null, error: "connection_refused" });
    expect(body.detail).toContain("connection was refused");
    expect(await countRows(webhookSubscriptions)).toBe(before);
  });

  it("refuses URLs that break the rules with 400 invalid_webhook_url on the url field, contacting nothing", async () => {
    const app = await registeredApp();
    const r = await receiver();
    const port = new URL(r.url).port;
    const cases = [
      "ftp://127.0.0.1/hooks",
      `http://user:pass@127.0.0.1:${port}/hooks`,
      `http://127.0.0.1:${port}/hooks#frag`,
      `http://127.0.0.1:${port}/hooks#`,
      `http://127.0.0.1:${port}/${"a".repeat(2000)}`,
      // Under 2,000 characters as sent, some 11,000 as requested (and kept): each é is %C3%A9.
      `http://127.0.0.1:${port}/${"é".repeat(1900)}`,
      "not a url",
      // Read backwards in the console: "…/hooks/moc.evil" shown as "…/hooks/live.com".
      `http://127.0.0.1:${port}/hooks/\u202emoc.live`,
      `http://127.0.0.1:${port}/hoo\u200bks`,
    ];
    for (const url of cases) {
      const body = await expectProblem(await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url, events: ["activity.created"] } }), 400, "invalid_webhook_url");
      expect(body.errors, url).toEqual([{ field: "url", code: "invalid_webhook_url", detail: expect.any(String) }]);
    }
    expect(r.seen).toHaveLength(0);
  });

  it("takes only https:// and public addresses when private networks are not allowed", async () => {
    process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "false";
    resetEnvForTests();
    const app = await registeredApp();
    const r = await receiver();
    const port = new URL(r.url).port;
    const cases: [string, RegExp][] = [
      [r.url, /https:\/\//],
      [`https://127.0.0.1:${port}/hooks`, /not a public address/],
      [`https://10.1.2.3/hooks`, /not a public address/],
      [`https://[::1]:${port}/hooks`, /not a public address/],
      [`https://localhost:${port}/hooks`, /non-public addresses/],
    ];
    for (const [url, detail] of cases) {
      const body = await expectProblem(await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url, events: ["activity.created"] } }), 400, "invalid_webhook_url");
      expect((body.errors as { detail: string }[])[0]!.detail, url).toMatch(detail);
    }
    expect(r.seen).toHaveLength(0);
    expect(await countRows(webhookSubscriptions, eq(webhookSubscriptions.clientId, app.clientId))).toBe(0);
  });

  it("refuses unknown event types with 400 invalid_enum_value, and an empty list or missing url with invalid_request", async () => {
    const app = await registeredApp();
    const r = await receiver();
    const unknown = await expectProblem(
      await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: ["activity.created", "activity.archived"] } }),
      400,
      "invalid_enum_value",
    );
    expect(unknown.errors).toEqual([{ field: "events.1", code: "invalid_enum_value", detail: expect.any(String) }]);
    await expectProblem(await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: [] } }), 400, "invalid_request");
    await expectProblem(await api.call(app.token, "POST", "/v1/app/webhooks", { body: { events: ["activity.created"] } }), 400, "invalid_request");
    await expectProblem(await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: ["activity.created"], secret: "x" } }), 400, "invalid_request");
    expect(r.seen).toHaveLength(0);
  });

  it("replays the first answer for the same Idempotency-Key: one subscription, one handshake, the same secret", async () => {
    const app = await registeredApp();
    const r = await receiver();
    const headers = { "idempotency-key": "subscribe-1" };
    const first = await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: ["activity.created"] }, headers });
    const second = await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: ["activity.created"] }, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(await second.json()).toEqual(await first.json());
    expect(r.seen).toHaveLength(1);
    expect(await countRows(webhookSubscriptions, eq(webhookSubscriptions.clientId, app.clientId))).toBe(1);
    await expectProblem(
      await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: ["metric.created"] }, headers }),
      422,
      "idempotency_key_reused",
    );
  });

  it(`allows ${CAPS.subscriptionsPerApp} subscriptions per app, then 409 conflict`, async () => {
    const app = await registeredApp();
    const r = await receiver();
    const db = await api.db();
    await db.insert(webhookSubscriptions).values(
      Array.from({ length: CAPS.subscriptionsPerApp }, (_, i) => ({
        id: `whs_limit${i}_${app.clientId}`,
        clientId: app.clientId,
        url: r.url,
        events: ["activity.created"],
        secretSealed: "v1.x.y.z",
      })),
    );
    await expectProblem(await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: ["activity.created"] } }), 409, "conflict");
    expect(r.seen).toHaveLength(0);
  });
});

describe("credentials", () => {
  it("refuses a personal access token and an athlete's OAuth token on every webhook operation with 403 client_credentials_required", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const person = await api.person();
    const pat = await api.pat(person.id);
    const db = await api.db();
    const grantId = `grt_${randomBytes(6).toString("hex")}`;
    const familyId = `fam_${randomBytes(6).toString("hex")}`;
    await db.insert(oauthGrants).values({ id: grantId, clientId: app.clientId, userId: person.id, scopes: ["activities.read"] });
    await db.insert(oauthTokenFamilies).values({ id: familyId, grantId, scopes: ["activities.read"] });
    const athleteToken = (await issueAccessToken(db, { subject: person.id, clientId: app.clientId, scopes: ["activities.read"], grantId, familyId })).token;
    const calls: [string, string][] = [
      ["GET", "/v1/app/webhooks"],
      ["POST", "/v1/app/webhooks"],
      ["GET", `/v1/app/webhooks/${sub.id}`],
      ["PATCH", `/v1/app/webhooks/${sub.id}`],
      ["DELETE", `/v1/app/webhooks/${sub.id}`],
      ["POST", `/v1/app/webhooks/${sub.id}/rotate-secret`],
      ["POST", `/v1/app/webhooks/${sub.id}/send-test-event`],
      ["GET", `/v1/app/webhooks/${sub.id}/deliveries`],
      ["GET", `/v1/app/webhooks/${sub.id}/deliveries/whd_x`],
      ["POST", `/v1/app/webhooks/${sub.id}/deliveries/whd_x/redeliver`],
      ["GET", "/v1/app/events"],
    ];
    for (const token of [pat, athleteToken]) {
      for (const [method, path] of calls) {
        const res = await api.call(token, method, path, method === "POST" || method === "PATCH" ? { body: { url: "https://x.example", events: ["activity.created"] } } : {});
        await expectProblem(res, 403, "client_credentials_required");
      }
    }
    expect(await subscriptionRow(sub.id)).toBeDefined();
  });

  it("answers 404 for another app's subscription and its deliveries, and changes nothing", async () => {
    const mine = await registeredApp();
    const theirs = await registeredApp();
    const sub = await subscribe(theirs, (await receiver()).url);
    const { delivery: d } = await delivery(sub.id, { status: "failed" });
    const calls: [string, string, unknown?][] = [
      ["GET", `/v1/app/webhooks/${sub.id}`],
      ["PATCH", `/v1/app/webhooks/${sub.id}`, { events: ["metric.created"] }],
      ["DELETE", `/v1/app/webhooks/${sub.id}`],
      ["POST", `/v1/app/webhooks/${sub.id}/rotate-secret`],
      ["POST", `/v1/app/webhooks/${sub.id}/send-test-event`],
      ["GET", `/v1/app/webhooks/${sub.id}/deliveries`],
      ["GET", `/v1/app/webhooks/${sub.id}/deliveries/${d.id}`],
      ["POST", `/v1/app/webhooks/${sub.id}/deliveries/${d.id}/redeliver`],
      ["GET", `/v1/app/webhooks/whs_nope`],
    ];
    const before = await subscriptionRow(sub.id);
    for (const [method, path, body] of calls) {
      const res = await api.call(mine.token, method, path, body ? { body } : {});
      const problem = await expectProblem(res, 404, "not_found");
      matchesDocument(path.includes("/deliveries/") ? "/v1/app/webhooks/{id}/deliveries/{delivery_id}" : "/v1/app/webhooks/{id}", "get", 404, "application/problem+json", problem);
    }
    expect(await subscriptionRow(sub.id)).toEqual(before);
    expect((await deliveryRow(d.id)).status).toBe("failed");
    const list = SubscriptionList.parse(await (await api.call(mine.token, "GET", "/v1/app/webhooks")).json());
    expect(list.data).toEqual([]);
  });
});

describe("GET /v1/app/webhooks and /v1/app/webhooks/{id}", () => {
  it("lists the app's own subscriptions oldest first, each with consecutive_failures, page by page", async () => {
    const app = await registeredApp();
    const other = await registeredApp();
    const r = await receiver();
    const a = await subscribe(app, r.url);
    const b = await subscribe(app, `${r.url}/b`, ["metric.created"]);
    const c = await subscribe(app, `${r.url}/c`, ["athlete.deauthorized"]);
    await subscribe(other, r.url);
    const failingSince = new Date(Date.now() - 3_600_000);
    await setSubscription(b.id, { consecutiveFailures: 12, failingSince });

    const res = await api.call(app.token, "GET", "/v1/app/webhooks");
    expect(res.status).toBe(200);
    const body = await res.json();
    matchesDocument("/v1/app/webhooks", "get", 200, "application/json", body);
    const all = SubscriptionList.parse(body);
    expect(all.data.map((s) => s.id)).toEqual([a.id, b.id, c.id]);
    expect(all.data.map((s) => s.consecutive_failures)).toEqual([0, 12, 0]);
    expect(all.data[1]!.failing_since).toBe(failingSince.toISOString());
    expect(all.next_cursor).toBeNull();

    const p1 = SubscriptionList.parse(await (await api.call(app.token, "GET", "/v1/app/webhooks?limit=2")).json());
    expect(p1.data.map((s) => s.id)).toEqual([a.id, b.id]);
    const p2 = SubscriptionList.parse(await (await api.call(app.token, "GET", `/v1/app/webhooks?limit=2&cursor=${p1.next_cursor}`)).json());
    expect(p2.data.map((s) => s.id)).toEqual([c.id]);
    expect(p2.next_cursor).toBeNull();
    await expectProblem(await api.call(app.token, "GET", "/v1/app/webhooks?cursor=bogus"), 400, "invalid_cursor");
  });

  it("gets one subscription in the wire shape", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const res = await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}`);
    const body = await res.json();
    matchesDocument("/v1/app/webhooks/{id}", "get", 200, "application/json", body);
    const { secret: _secret, ...rest } = sub;
    expect(Subscription.parse(body)).toEqual(rest);
  });
});

describe("PATCH /v1/app/webhooks/{id}", () => {
  it("changes events without a handshake", async () => {
    const app = await registeredApp();
    const r = await receiver();
    const sub = await subscribe(app, r.url);
    const res = await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { events: ["metric.created", "activity.updated"] } });
    expect(res.status).toBe(200);
    const body = await res.json();
    matchesDocument("/v1/app/webhooks/{id}", "patch", 200, "application/json", body);
    expect(Subscription.parse(body).events).toEqual(["metric.created", "activity.updated"]);
    expect(r.seen).toHaveLength(1);
  });

  it("verifies a new URL before it replaces the old one; a failed handshake changes nothing", async () => {
    const app = await registeredApp();
    const first = await receiver();
    const sub = await subscribe(app, first.url);

    const broken = await receiver(answering(500, "down"));
    const problem = await expectProblem(
      await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { url: broken.url, events: ["metric.created"] } }),
      400,
      "webhook_verification_failed",
    );
    expect(problem.handshake).toMatchObject({ outcome: "unexpected_status", status: 500, body_excerpt: "down" });
    const unchanged = await subscriptionRow(sub.id);
    expect([unchanged!.url, unchanged!.events]).toEqual([first.url, ["activity.created"]]);

    const second = await receiver();
    const res = await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { url: second.url, verify_token: "again" } });
    expect(res.status).toBe(200);
    expect(Subscription.parse(await res.json()).url).toBe(second.url);
    expect(second.seen).toHaveLength(1);
    expect(second.seen[0]!.url.searchParams.get("hub.verify_token")).toBe("again");

    // The same URL again is not a new one, nor is it in another spelling of the same address.
    await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { url: second.url } });
    const respelled = second.url.replace("http://127.0.0.1", "HTTP://0x7f.1");
    expect(respelled).not.toBe(second.url);
    expect(Subscription.parse(await (await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { url: respelled } })).json()).url).toBe(second.url);
    expect(second.seen).toHaveLength(1);
    await expectProblem(await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { url: "ftp://x" } }), 400, "invalid_webhook_url");
  });

  it("says every problem of a body at once: a URL it refuses along with missing events, in the API and the console", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const long = `https://hooks.example.com/${"a".repeat(3000)}`;
    const fields = async (res: Response) => {
      const body = await expectProblem(res, 400, "invalid_request");
      return Object.fromEntries((body.errors as { field: string; code: string; detail: string }[]).map((e) => [e.field, [e.code, e.detail]]));
    };
    const both = { url: ["invalid_webhook_url", "must be at most 2000 characters"], events: ["invalid_request", "subscribe to at least one event type"] };
    expect(await fields(await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: long, events: [] } }))).toEqual(both);
    expect(await fields(await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { url: long, events: [] } }))).toEqual(both);
    const cookie = await sessionCookieFor(app.ownerId);
    const console = (method: string, path: string, body: object) =>
      fetch(`${api.url}/api/console/apps/${app.clientId}/webhooks${path}`, {
        method,
        headers: { cookie, origin: api.url, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect(await fields(await console("PATCH", `/${sub.id}`, { url: "https://user:pw@hooks.example.com/h", events: [] }))).toEqual({
      url: ["invalid_webhook_url", "must not carry credentials (user:password@)"],
      events: both.events,
    });
    expect(await fields(await console("POST", "", { url: long, events: [] }))).toEqual(both);
    // Alone, a URL's problem is the verb's to say, as before.
    await expectProblem(await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: long, events: ["activity.created"] } }), 400, "invalid_webhook_url");
    expect(await subscriptionRow(sub.id)).toMatchObject({ url: sub.url, events: ["activity.created"] });
  });

  it("refuses an empty change, unknown members and redeliver_failed without status active", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    await expectProblem(await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: {} }), 400, "invalid_request");
    await expectProblem(await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { secret: "x" } }), 400, "invalid_request");
    await expectProblem(await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { status: "paused" } }), 400, "invalid_enum_value");
    await expectProblem(
      await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { events: ["activity.created"], redeliver_failed: true } }),
      400,
      "invalid_parameter_combination",
    );
  });

  it("re-enables a disabled subscription after a fresh handshake, resetting the failure count; a failed handshake leaves it disabled", async () => {
    const app = await registeredApp();
    let healthy = false;
    const r = await receiver((s, res) => (healthy ? echo(s, res) : res.writeHead(503).end("maintenance")));
    healthy = true;
    const sub = await subscribe(app, r.url);
    const disabledAt = new Date(Date.now() - 60_000);
    await setSubscription(sub.id, {
      status: "disabled",
      consecutiveFailures: 20,
      failingSince: new Date(Date.now() - 3_600_000),
      disabledAt,
      disabledReason: "20 consecutive failed deliveries",
    });
    healthy = false;
    await expectProblem(await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { status: "active" } }), 400, "webhook_verification_failed");
    expect(await subscriptionRow(sub.id)).toMatchObject({ status: "disabled", consecutiveFailures: 20, disabledAt });

    healthy = true;
    const seen = r.seen.length;
    const res = await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { status: "active" } });
    expect(res.status).toBe(200);
    expect(r.seen.length).toBe(seen + 1);
    expect(Subscription.parse(await res.json())).toMatchObject({
      status: "active",
      consecutive_failures: 0,
      failing_since: null,
      disabled_at: null,
      disabled_reason: null,
    });
    // Already active: nothing to verify.
    await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { status: "active" } });
    expect(r.seen.length).toBe(seen + 1);
  });

  it("sends the verify_token the app chose in every later handshake (re-enabling, a new URL), until an update sends another; it is kept sealed", async () => {
    const app = await registeredApp();
    // An endpoint that answers only its own token, as a Strava-style receiver does.
    let expected = "my-secret-token";
    const checking = (s: Seen, res: http.ServerResponse) =>
      s.url.searchParams.get("hub.verify_token") === expected ? echo(s, res) : res.writeHead(403).end("bad token");
    const first = await receiver(checking);
    const created = await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: first.url, events: ["activity.created"], verify_token: expected } });
    expect(created.status, await created.clone().text()).toBe(201);
    const sub = SubscriptionWithSecret.parse(await created.json());
    const row = await subscriptionRow(sub.id);
    expect(row!.verifyTokenSealed).not.toBeNull();
    expect(row!.verifyTokenSealed).not.toContain(expected);

    await setSubscription(sub.id, { status: "disabled", consecutiveFailures: 20, failingSince: new Date(), disabledAt: new Date(), disabledReason: "20 consecutive failed deliveries" });
    // The console's Re-enable sends only the status.
    const reenabled = await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { status: "active" } });
    expect(reenabled.status, await reenabled.clone().text()).toBe(200);
    expect(first.seen.map((s) => s.url.searchParams.get("hub.verify_token"))).toEqual([expected, expected]);

    const second = await receiver(checking);
    expect((await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { url: second.url } })).status).toBe(200);
    expect(second.seen.map((s) => s.url.searchParams.get("hub.verify_token"))).toEqual([expected]);

    // A new token replaces it for the handshakes after.
    expected = "rotated-token";
    const third = await receiver(checking);
    expect((await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { url: third.url, verify_token: expected } })).status).toBe(200);
    const fourth = await receiver(checking);
    expect((await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { url: fourth.url } })).status).toBe(200);
    expect(fourth.seen.map((s) => s.url.searchParams.get("hub.verify_token"))).toEqual(["rotated-token"]);
  });

  it("keeps a verify_token sent alone for the next handshake, running none now: a disabled endpoint whose receiver changed its token is re-enabled", async () => {
    const app = await registeredApp();
    let expected = "first-token";
    const checking = (s: Seen, res: http.ServerResponse) =>
      s.url.searchParams.get("hub.verify_token") === expected ? echo(s, res) : res.writeHead(403).end("wrong verify token");
    const r = await receiver(checking);
    const created = await api.call(app.token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: ["activity.created"], verify_token: expected } });
    expect(created.status, await created.clone().text()).toBe(201);
    const sub = SubscriptionWithSecret.parse(await created.json());
    await setSubscription(sub.id, { status: "disabled", consecutiveFailures: 20, failingSince: new Date(), disabledAt: new Date(), disabledReason: "20 consecutive failed deliveries" });

    // The receiver now checks another token: re-enabling with the kept one fails.
    expected = "second-token";
    await expectProblem(await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { status: "active" } }), 400, "webhook_verification_failed");

    // The new token alone is a change: stored, with no handshake now, the endpoint still disabled.
    const seen = r.seen.length;
    const res = await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { verify_token: expected } });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = await res.json();
    matchesDocument("/v1/app/webhooks/{id}", "patch", 200, "application/json", body);
    expect(Subscription.parse(body).status).toBe("disabled");
    expect(r.seen.length).toBe(seen);
    expect(unseal((await subscriptionRow(sub.id))!.verifyTokenSealed!)).toBe(expected);

    // Re-enabling (the console's Re-enable sends only the status) sends it.
    const reenabled = await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { status: "active" } });
    expect(reenabled.status, await reenabled.clone().text()).toBe(200);
    expect(r.seen.slice(seen).map((s) => s.url.searchParams.get("hub.verify_token"))).toEqual([expected]);
    expect(Subscription.parse(await reenabled.json()).status).toBe("active");
  });

  it("re-enables and redelivers: every delivery failed since the streak began is pending again, due now; older and succeeded ones stay", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const streakStart = new Date(Date.now() - 2 * 3_600_000);
    const before = new Date(streakStart.getTime() - 86_400_000);
    const old = await delivery(sub.id, { status: "failed", createdAt: before, updatedAt: before });
    await attempt(old.delivery.id, 1, { startedAt: before });
    const exhausted = await delivery(sub.id, { status: "failed", attemptCount: 20, createdAt: before, updatedAt: before });
    await attempt(exhausted.delivery.id, 20, { startedAt: new Date(streakStart.getTime() + 1000) });
    const failedAtDisable = await delivery(sub.id, { status: "failed", createdAt: new Date(streakStart.getTime() + 5000) });
    const succeeded = await delivery(sub.id, { status: "succeeded", createdAt: new Date(streakStart.getTime() + 6000) });
    await setSubscription(sub.id, {
      status: "disabled",
      consecutiveFailures: 20,
      failingSince: streakStart,
      disabledAt: new Date(),
      disabledReason: "20 consecutive failed deliveries",
    });

    let res!: Response;
    const wakes = await wakesDuring(async () => {
      res = await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { status: "active", redeliver_failed: true } });
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { redelivered: number; status: string };
    expect(body).toMatchObject({ status: "active", redelivered: 2 });
    expect(wakes).toBeGreaterThanOrEqual(1);
    for (const d of [exhausted, failedAtDisable]) {
      const row = await deliveryRow(d.delivery.id);
      expect(row.status).toBe("pending");
      expect(row.lockedUntil).toBeNull();
      expect(Math.abs(row.nextAttemptAt.getTime() - Date.now())).toBeLessThan(10_000);
    }
    expect((await deliveryRow(old.delivery.id)).status).toBe("failed");
    expect((await deliveryRow(succeeded.delivery.id)).status).toBe("succeeded");
  });

  it("disables on request: pending deliveries become failed, and the reason says who", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const pending = await delivery(sub.id);
    const res = await api.call(app.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { status: "disabled" } });
    expect(Subscription.parse(await res.json())).toMatchObject({ status: "disabled", disabled_reason: expect.stringContaining("developer") });
    expect(await deliveryRow(pending.delivery.id)).toMatchObject({ status: "failed", failureReason: "subscription_disabled" });
  });
});

describe("DELETE /v1/app/webhooks/{id}", () => {
  it("answers 204 and removes the subscription with its deliveries", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const { delivery: d } = await delivery(sub.id);
    await attempt(d.id, 1);
    const res = await api.call(app.token, "DELETE", `/v1/app/webhooks/${sub.id}`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect(await subscriptionRow(sub.id)).toBeUndefined();
    expect(await countRows(webhookDeliveries, eq(webhookDeliveries.subscriptionId, sub.id))).toBe(0);
    await expectProblem(await api.call(app.token, "DELETE", `/v1/app/webhooks/${sub.id}`), 404, "not_found");
  });
});

describe("POST /v1/app/webhooks/{id}/rotate-secret", () => {
  it("returns a new secret once and keeps the previous one signing for 24 hours", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const res = await api.call(app.token, "POST", `/v1/app/webhooks/${sub.id}/rotate-secret`);
    expect(res.status).toBe(200);
    const body = await res.json();
    matchesDocument("/v1/app/webhooks/{id}/rotate-secret", "post", 200, "application/json", body);
    const rotated = SubscriptionWithSecret.parse(body);
    expect(isWellFormedToken(rotated.secret, "webhookSecret")).toBe(true);
    expect(rotated.secret).not.toBe(sub.secret);
    const expires = Date.parse(rotated.previous_secret_expires_at!);
    expect(Math.abs(expires - (Date.now() + 86_400_000))).toBeLessThan(60_000);
    const row = await subscriptionRow(sub.id);
    expect(unseal(row!.secretSealed)).toBe(rotated.secret);
    expect(unseal(row!.previousSecretSealed!)).toBe(sub.secret);

    // Rotating again keeps only the secret that was current.
    const again = SubscriptionWithSecret.parse(await (await api.call(app.token, "POST", `/v1/app/webhooks/${sub.id}/rotate-secret`)).json());
    const row2 = await subscriptionRow(sub.id);
    expect([unseal(row2!.secretSealed), unseal(row2!.previousSecretSealed!)]).toEqual([again.secret, rotated.secret]);
  });
});

describe("deliveries", () => {
  it("lists the log newest first with each delivery's event and attempts, telling never-sent from an error answer", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const t0 = Date.now() - 60_000;
    const ok = await delivery(sub.id, { status: "succeeded", attemptCount: 2, createdAt: new Date(t0) });
    await attempt(ok.delivery.id, 1, { outcome: "not_sent", responseStatus: null, responseBodyExcerpt: null, error: "connection_refused" });
    await attempt(ok.delivery.id, 2, { responseStatus: 204, responseBodyExcerpt: "" });
    const failing = await delivery(sub.id, { status: "pending", attemptCount: 1, createdAt: new Date(t0 + 1000) });
    await attempt(failing.delivery.id, 1, { responseStatus: 500, responseBodyExcerpt: "boom" });
    const unsent = await delivery(sub.id, { status: "pending", createdAt: new Date(t0 + 2000) });

    const res = await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries`);
    expect(res.status).toBe(200);
    const body = await res.json();
    matchesDocument("/v1/app/webhooks/{id}/deliveries", "get", 200, "application/json", body);
    const list = DeliveryList.parse(body);
    expect(list.data.map((d) => d.id)).toEqual([unsent.delivery.id, failing.delivery.id, ok.delivery.id]);
    const [u, f, s] = list.data;
    expect(u).toMatchObject({ status: "pending", attempt_count: 0, attempts: [], subscription_id: sub.id });
    expect(u!.next_attempt_at).not.toBeNull();
    expect(u!.event).toEqual({
      id: unsent.event.id,
      type: "activity.created",
      athlete_id: "ath_x",
      object_id: unsent.event.objectId,
      object_type: "activity",
      occurred_at: unsent.event.occurredAt.toISOString(),
    });
    expect(f!.attempts).toEqual([
      expect.objectContaining({ attempt: 1, outcome: "response", response_status: 500, response_body_excerpt: "boom", error: null }),
    ]);
    expect(s!.next_attempt_at).toBeNull();
    expect(s!.attempts.map((a) => [a.attempt, a.outcome, a.response_status, a.error])).toEqual([
      [1, "not_sent", null, "connection_refused"],
      [2, "response", 204, null],
    ]);
    expect(s!.attempts[0]!.request_headers).toEqual({ "content-type": "application/json", "service-signature": "t=1,v1=ab" });
    expect(s!.attempts[0]!.request_body).toBe('{"id":"evt_1"}');

    const pending = DeliveryList.parse(await (await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries?status=pending`)).json());
    expect(pending.data.map((d) => d.id)).toEqual([unsent.delivery.id, failing.delivery.id]);
    const succeeded = DeliveryList.parse(await (await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries?status=succeeded`)).json());
    expect(succeeded.data.map((d) => d.id)).toEqual([ok.delivery.id]);

    const p1 = DeliveryList.parse(await (await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries?limit=2`)).json());
    expect(p1.data).toHaveLength(2);
    const p2 = DeliveryList.parse(await (await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries?limit=2&cursor=${p1.next_cursor}`)).json());
    expect(p2.data.map((d) => d.id)).toEqual([ok.delivery.id]);
    expect(p2.next_cursor).toBeNull();

    await expectProblem(await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries?status=sent`), 400, "invalid_enum_value");
    await expectProblem(await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries?cursor=bogus`), 400, "invalid_cursor");
  });

  it("pages exactly through the log, newest event first, deliveries created within the same millisecond included", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const at = new Date();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await delivery(sub.id, { createdAt: at })).delivery.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `&cursor=${cursor}` : "";
      const page = DeliveryList.parse(await (await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries?limit=2${q}`)).json());
      seen.push(...page.data.map((d) => d.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  it("gets one delivery, and redelivers it: pending, due now, same event, attempts kept, the runner woken", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const { delivery: d, event: e } = await delivery(sub.id, { status: "succeeded", attemptCount: 1 });
    await attempt(d.id, 1, { responseStatus: 200 });

    const got = await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries/${d.id}`);
    const body = await got.json();
    matchesDocument("/v1/app/webhooks/{id}/deliveries/{delivery_id}", "get", 200, "application/json", body);
    expect(Delivery.parse(body)).toMatchObject({ id: d.id, status: "succeeded", event: { id: e.id }, attempt_count: 1 });

    let res!: Response;
    const wakes = await wakesDuring(async () => {
      res = await api.call(app.token, "POST", `/v1/app/webhooks/${sub.id}/deliveries/${d.id}/redeliver`);
    });
    expect(res.status).toBe(202);
    const redelivered = await res.json();
    matchesDocument("/v1/app/webhooks/{id}/deliveries/{delivery_id}/redeliver", "post", 202, "application/json", redelivered);
    expect(Delivery.parse(redelivered)).toMatchObject({ id: d.id, status: "pending", event: { id: e.id }, attempts: [expect.objectContaining({ attempt: 1 })] });
    expect(wakes).toBe(1);
    const row = await deliveryRow(d.id);
    expect(row).toMatchObject({ status: "pending", lockedUntil: null, attemptCount: 1 });
    expect(Math.abs(row.nextAttemptAt.getTime() - Date.now())).toBeLessThan(10_000);

    await expectProblem(await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries/whd_nope`), 404, "not_found");
    await expectProblem(await api.call(app.token, "POST", `/v1/app/webhooks/${sub.id}/deliveries/whd_nope/redeliver`), 404, "not_found");
  });

  it("does not take a delivery from a worker holding it right now", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const held = new Date(Date.now() + 30_000);
    const { delivery: d } = await delivery(sub.id, { status: "pending", lockedUntil: held, nextAttemptAt: new Date(Date.now() + 600_000) });
    expect((await api.call(app.token, "POST", `/v1/app/webhooks/${sub.id}/deliveries/${d.id}/redeliver`)).status).toBe(202);
    const row = await deliveryRow(d.id);
    expect(row.lockedUntil?.getTime()).toBe(held.getTime());
    expect(row.nextAttemptAt.getTime()).toBeLessThan(Date.now() + 10_000);
  });

  it("stops a disconnected athlete's events: waiting ones are withdrawn, none is sent again, the deauthorization still goes", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url, ["activity.created", "athlete.deauthorized"]);
    const person = await api.person();
    const db = await api.db();
    const grantId = `grt_${randomBytes(6).toString("hex")}`;
    await db.insert(oauthGrants).values({ id: grantId, clientId: app.clientId, userId: person.id, scopes: ["activities.read"], createdAt: new Date(Date.now() - 60_000), updatedAt: new Date(Date.now() - 60_000) });
    // The athlete's events, as fan-out left their deliveries: one sent, one waiting for a retry.
    const athletesDelivery = async (over: Partial<typeof webhookDeliveries.$inferInsert>) => {
      const e = await event("activity.created", person.id);
      const [row] = await db.insert(webhookDeliveries).values({ id: newId("whd"), subscriptionId: sub.id, eventId: e.id, eventSeq: e.seq, ...over }).returning();
      return row!;
    };
    const sent = await athletesDelivery({ status: "succeeded", attemptCount: 1 });
    const waiting = await athletesDelivery({ status: "pending", attemptCount: 2, nextAttemptAt: new Date(Date.now() + 300_000) });
    const redeliver = (id: string) => api.call(app.token, "POST", `/v1/app/webhooks/${sub.id}/deliveries/${id}/redeliver`);
    // While the app is authorized, a sent delivery can be sent again.
    expect((await redeliver(sent.id)).status).toBe(202);
    await db.update(webhookDeliveries).set({ status: "succeeded" }).where(eq(webhookDeliveries.id, sent.id));

    await inWriteCtx((await api.as(person.id)).ctx, (ctx) => disconnectApp({ ctx, grantId }));
    expect(await deliveryRow(waiting.id)).toMatchObject({ status: "failed", attemptCount: 2, failureReason: "athlete_disconnected" });
    // The log says why it failed.
    const shown = await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries/${waiting.id}`);
    expect(await shown.json()).toMatchObject({ status: "failed", failure_reason: "athlete_disconnected", attempt_count: 2 });
    expect(await (await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries/${sent.id}`)).json()).toMatchObject({ status: "succeeded", failure_reason: null });
    await expectProblem(await redeliver(sent.id), 409, "conflict");
    await expectProblem(await redeliver(waiting.id), 409, "conflict");
    expect((await deliveryRow(sent.id)).status).toBe("succeeded");
    // The one event that follows the end of the authorization is the app's, and is fanned out to it.
    const [deauthorized] = await db.select().from(events).where(and(eq(events.athleteId, person.id), eq(events.type, "athlete.deauthorized")));
    expect(deauthorized).toMatchObject({ clientId: app.clientId });
    await fanOutEvents(db);
    expect(await db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.eventId, deauthorized!.id))).toHaveLength(1);
  });

  it("refuses to redeliver or send a test event to a disabled subscription with 409 conflict", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url);
    const { delivery: d } = await delivery(sub.id, { status: "failed" });
    await setSubscription(sub.id, { status: "disabled", disabledAt: new Date(), disabledReason: "20 consecutive failed deliveries" });
    await expectProblem(await api.call(app.token, "POST", `/v1/app/webhooks/${sub.id}/deliveries/${d.id}/redeliver`), 409, "conflict");
    await expectProblem(await api.call(app.token, "POST", `/v1/app/webhooks/${sub.id}/send-test-event`), 409, "conflict");
    expect((await deliveryRow(d.id)).status).toBe("failed");
  });
});

describe("POST /v1/app/webhooks/{id}/send-test-event", () => {
  it("appends a webhook.test event for the app's owner, already fanned out, and queues its one delivery to this subscription", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url, ["metric.created"]);
    const other = await subscribe(app, (await receiver()).url, ["metric.created"]);
    let res!: Response;
    const wakes = await wakesDuring(async () => {
      res = await api.call(app.token, "POST", `/v1/app/webhooks/${sub.id}/send-test-event`);
    });
    expect(res.status).toBe(202);
    const body = await res.json();
    matchesDocument("/v1/app/webhooks/{id}/send-test-event", "post", 202, "application/json", body);
    const d = Delivery.parse(body);
    expect(d).toMatchObject({
      subscription_id: sub.id,
      status: "pending",
      attempt_count: 0,
      event: { type: "webhook.test", athlete_id: app.ownerId, object_type: "webhook_subscription", object_id: sub.id },
    });
    expect(d.id).toMatch(/^whd_/);
    expect(wakes).toBe(1);
    const [e] = await (await api.db()).select().from(events).where(eq(events.id, d.event!.id));
    expect(e).toMatchObject({ clientId: app.clientId, type: "webhook.test" });
    expect(e!.fannedOutAt).not.toBeNull();
    expect(await countRows(webhookDeliveries, eq(webhookDeliveries.eventId, e!.id))).toBe(1);
    expect(await countRows(webhookDeliveries, eq(webhookDeliveries.subscriptionId, other.id))).toBe(0);
    const log = DeliveryList.parse(await (await api.call(app.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries`)).json());
    expect(log.data.map((x) => x.id)).toEqual([d.id]);
  });

  it("accepts Idempotency-Key, in the API and the console: a retried request answers the same delivery and sends no second event", async () => {
    const app = await registeredApp();
    const sub = await subscribe(app, (await receiver()).url, ["metric.created"]);
    const cookie = await sessionCookieFor(app.ownerId);
    const senders = {
      api: (key: string) => api.call(app.token, "POST", `/v1/app/webhooks/${sub.id}/send-test-event`, { headers: { "idempotency-key": key } }),
      console: (key: string) =>
        fetch(`${api.url}/api/console/apps/${app.clientId}/webhooks/${sub.id}/send-test-event`, {
          method: "POST",
          headers: { cookie, origin: api.url, "idempotency-key": key },
        }),
    };
    let made = 0;
    for (const [where, send] of Object.entries(senders)) {
      const first = await send(`test-once-${where}`);
      expect(first.status, where).toBe(202);
      const again = await send(`test-once-${where}`);
      expect(again.status, where).toBe(202);
      expect(again.headers.get("idempotent-replayed"), where).toBe("true");
      expect(Delivery.parse(await again.json()).id).toBe(Delivery.parse(await first.json()).id);
      expect(await countRows(webhookDeliveries, eq(webhookDeliveries.subscriptionId, sub.id)), where).toBe(++made);
      await expectProblem(await send("not a key"), 400, "invalid_request");
      expect(await countRows(webhookDeliveries, eq(webhookDeliveries.subscriptionId, sub.id)), where).toBe(made);
    }
  });
});

describe("the console's verbs", () => {
  it("serve an app's owner and answer anyone else with not_found", async () => {
    const app = await registeredApp();
    const stranger = await api.person();
    const r = await receiver();
    const db = await api.db();
    const owner = { db, actor: { kind: "session" as const, userId: app.ownerId } };
    const sub = await inWriteCtx(owner, (ctx) => createSubscription({ ctx, clientId: app.clientId, input: CreateSubscriptionInput.parse({ url: r.url, events: ["activity.created"] }) }));
    expect((await getSubscription({ ctx: owner, clientId: app.clientId, id: sub.id })).id).toBe(sub.id);
    expect((await listDeliveries({ ctx: owner, clientId: app.clientId, subscriptionId: sub.id, query: { limit: 50 } })).data).toEqual([]);
    const other = { db, actor: { kind: "session" as const, userId: stranger.id } };
    for (const call of [
      () => getSubscription({ ctx: other, clientId: app.clientId, id: sub.id }),
      () => inWriteCtx(other, (ctx) => createSubscription({ ctx, clientId: app.clientId, input: CreateSubscriptionInput.parse({ url: r.url, events: ["activity.created"] }) })),
    ]) {
      const err = (await call().catch((e: unknown) => e)) as ApiError;
      expect(err).toBeInstanceOf(ApiError);
      expect(err.code).toBe("not_found");
    }
    expect(r.seen).toHaveLength(1);
    expect(await countRows(webhookSubscriptions, and(eq(webhookSubscriptions.clientId, app.clientId)))).toBe(1);
  });
});
