import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { createActivity } from "../../activities/create-activity";
import { webhookAttempts, webhookDeliveries } from "../../db/schema";
import { getEnv, resetEnvForTests } from "../../env";
import { setupApi } from "../../testing/fixtures";
import { webhookRows } from "../../testing/webhook-rows";
import { attemptDelivery } from "../attempt-delivery";
import { claimDueDeliveries } from "../claim-deliveries";
import { fanOutEvents } from "../fan-out";
import { inWriteCtx } from "../../http/operation";

// Issue 9: private networks are reached only by a demo on this machine (CONTRACT §1), and what an
// endpoint answered is never shown beyond what a receiver needs to debug its handshake.

const api = setupApi();
const rows = webhookRows(api.db);
const NAMES = ["BASE_URL", "DATABASE_URL", "WEBHOOKS_ALLOW_PRIVATE_NETWORKS", "HOST"] as const;
const saved: Record<string, string | undefined> = {};
const servers: http.Server[] = [];

/** Sets the settings named (undefined removes one) and parses them again. */
function settings(vars: Record<string, string | undefined>) {
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetEnvForTests();
}

// After setupApi's own beforeAll, which points BASE_URL at the test server.
beforeAll(() => {
  for (const k of NAMES) saved[k] = process.env[k];
});
afterEach(() => {
  for (const k of NAMES) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  resetEnvForTests();
});
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A loopback receiver; `answer` decides what it does with each request. */
async function receiver(answer: (url: URL, res: http.ServerResponse) => void) {
  const seen: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, "http://127.0.0.1");
    seen.push(url);
    answer(url, res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, seen };
}
const echo = (url: URL, res: http.ServerResponse) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ "hub.challenge": url.searchParams.get("hub.challenge") }));
};

/** A client-credentials token of a new app, under the settings of the moment. */
async function appToken(): Promise<string> {
  return (await api.app({ name: "Hooks App" })).token;
}

describe("WEBHOOKS_ALLOW_PRIVATE_NETWORKS's default (CONTRACT §1)", () => {
  it("is false on the embedded database with a public BASE_URL: a loopback URL is 400 invalid_webhook_url, and nothing is contacted", async () => {
    settings({ DATABASE_URL: undefined, WEBHOOKS_ALLOW_PRIVATE_NETWORKS: undefined, BASE_URL: "https://demo.example.com" });
    expect(getEnv().webhooksAllowPrivateNetworks).toBe(false);
    const token = await appToken();
    const r = await receiver(echo);
    for (const url of [r.url, r.url.replace("127.0.0.1", "localhost"), r.url.replace("http:", "https:")]) {
      const res = await api.call(token, "POST", "/v1/app/webhooks", { body: { url, events: ["activity.created"] } });
      expect(res.status, url).toBe(400);
      expect(await res.json()).toMatchObject({ code: "invalid_webhook_url", errors: [{ field: "url", code: "invalid_webhook_url" }] });
    }
    expect(r.seen).toHaveLength(0);
  });

  it("is true on the embedded database with a loopback BASE_URL: a loopback receiver can subscribe", async () => {
    settings({ DATABASE_URL: undefined, WEBHOOKS_ALLOW_PRIVATE_NETWORKS: undefined, BASE_URL: api.url });
    expect(getEnv().webhooksAllowPrivateNetworks).toBe(true);
    const token = await appToken();
    const r = await receiver(echo);
    const res = await api.call(token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: ["activity.created"] } });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(r.seen).toHaveLength(1);
  });

  it("allows no link-local or cloud metadata URL even then: 400 invalid_webhook_url, and nothing is contacted", async () => {
    settings({ DATABASE_URL: undefined, WEBHOOKS_ALLOW_PRIVATE_NETWORKS: undefined, BASE_URL: api.url });
    expect(getEnv().webhooksAllowPrivateNetworks).toBe(true);
    const token = await appToken();
    for (const url of ["http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/latest/meta-data/"]) {
      const res = await api.call(token, "POST", "/v1/app/webhooks", { body: { url, events: ["activity.created"] } });
      expect(res.status, url).toBe(400);
      expect(await res.json(), url).toMatchObject({
        code: "invalid_webhook_url",
        errors: [{ field: "url", code: "invalid_webhook_url", detail: expect.stringContaining("is a link-local or cloud metadata address") }],
      });
    }
  });

  it("counts as loopback only the BASE_URLs CONTRACT §1 lists: localhost, 127.0.0.0/8, [::1]", () => {
    for (const [baseUrl, loopback] of [
      ["http://localhost:3000", true],
      ["http://127.8.9.10", true],
      ["http://[::1]:3000", true],
      ["http://app.localhost:3000", false],
      ["http://localhost.example.com", false],
      ["http://128.0.0.1", false],
    ] as const) {
      settings({ DATABASE_URL: undefined, WEBHOOKS_ALLOW_PRIVATE_NETWORKS: undefined, BASE_URL: baseUrl });
      expect(getEnv().webhooksAllowPrivateNetworks, baseUrl).toBe(loopback);
    }
  });

  it("is false when HOST has the server listen beyond loopback, a loopback BASE_URL notwithstanding: others can reach it", () => {
    for (const [host, allowed] of [
      [undefined, true],
      ["127.0.0.1", true],
      ["::1", true],
      ["localhost", true],
      ["0.0.0.0", false],
      ["::", false],
      ["192.0.2.2", false],
    ] as const) {
      settings({ DATABASE_URL: undefined, WEBHOOKS_ALLOW_PRIVATE_NETWORKS: undefined, BASE_URL: "http://localhost:3000", HOST: host });
      expect(getEnv().webhooksAllowPrivateNetworks, String(host)).toBe(allowed);
    }
  });

  it("is false with a PostgreSQL DATABASE_URL, whatever BASE_URL is, unless set", () => {
    settings({ DATABASE_URL: "postgres://db.internal/aas", WEBHOOKS_ALLOW_PRIVATE_NETWORKS: undefined, BASE_URL: "http://localhost:3000" });
    expect(getEnv().webhooksAllowPrivateNetworks).toBe(false);
    settings({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: "true" });
    expect(getEnv().webhooksAllowPrivateNetworks).toBe(true);
  });
});

describe("what an answer shows (issue 9)", () => {
  it("a failed handshake's 400 shows the status, the media type and at most 200 printable characters of the body", async () => {
    settings({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: "true" });
    const token = await appToken();
    // As an internal service might answer: its later part must not come back to the caller.
    const body = `{"Code":"Success","Type":"AWS-HMAC",${'"Pad":"'.concat("x".repeat(200), '",')}"SecretAccessKey":"SECRET-KEY-MATERIAL"}`;
    const r = await receiver((_url, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(body);
    });
    const res = await api.call(token, "POST", "/v1/app/webhooks", { body: { url: r.url, events: ["activity.created"] } });
    const text = await res.text();
    expect(res.status, text).toBe(400);
    const problem = JSON.parse(text) as { code: string; detail: string; handshake: Record<string, unknown> };
    expect(problem.code).toBe("webhook_verification_failed");
    expect(problem.handshake).toMatchObject({ outcome: "wrong_challenge", status: 200, content_type: "text/plain", error: null });
    expect(Array.from(problem.handshake.body_excerpt as string).length).toBeLessThanOrEqual(200);
    expect(problem.detail).toContain('{"Code":"Success"');
    expect(text).not.toContain("SECRET-KEY-MATERIAL");
  });

  it("a delivery to an address that is not allowed is logged as not sent, blocked_address, with nothing of an answer", async () => {
    const r = await receiver((_url, res) => res.writeHead(200).end("internal answer"));
    const athlete = await api.person();
    const clientId = await rows.app();
    await rows.grant(clientId, athlete.id, ["activities.read"]);
    const sub = await rows.subscribe(clientId, r.url, ["activity.created"]);
    const db = await api.db();
    await inWriteCtx({ db, actor: { kind: "session", userId: athlete.id } }, (ctx) =>
      createActivity({
        ctx,
        athleteId: athlete.id,
        input: { name: "Run", sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 },
      }),
    );
    while ((await fanOutEvents(db)).events > 0);
    const [claimed] = (await claimDueDeliveries(db, { limit: 100 })).filter((d) => d.subscriptionId === sub.id);
    await attemptDelivery(db, claimed!, { allowPrivate: false });
    const [attempt] = await db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, claimed!.id));
    // Nothing went out, so the log shows no request either.
    expect(attempt).toMatchObject({ outcome: "not_sent", error: "blocked_address", responseStatus: null, responseBodyExcerpt: null, requestHeaders: {}, requestBody: "" });
    const [delivery] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, claimed!.id));
    expect(delivery).toMatchObject({ status: "pending", attemptCount: 1 });
    expect(r.seen).toHaveLength(0);
  });
});
