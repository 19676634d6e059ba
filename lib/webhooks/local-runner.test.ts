import { describe, expect, it } from "vitest";
import { asc, eq, inArray } from "drizzle-orm";
import Stripe from "stripe";
import { createActivity } from "../activities/create-activity";
import { updateActivity } from "../activities/update-activity";
import { createMetric } from "../metrics/metrics";
import { disconnectApp } from "../oauth-grants/disconnect-app";
import { events, webhookAttempts, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { seal } from "../crypto/seal";
import { resetEnvForTests } from "../env";
import { setupApi } from "../testing/fixtures";
import { refusedUrl, startReceiver } from "../testing/webhook-receiver";
import { webhookRows } from "../testing/webhook-rows";
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION } from "./policy";
import { runnerForFile } from "../testing/webhook-runner";
import { verifyWebhookSignature } from "./signature";
import { inWriteCtx } from "../http/operation";

process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
resetEnvForTests();

const api = setupApi();
const rows = webhookRows(api.db);
const delivery = runnerForFile(api);
const receiver = delivery.receiver;


async function as(userId: string) {
  return { db: await api.db(), actor: { kind: "session" as const, userId } };
}

async function record(userId: string, name = "Morning run") {
  return inWriteCtx(await as(userId), (ctx) =>
    createActivity({
      ctx,
      athleteId: userId,
      input: { name, sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 1800 },
    }),
  );
}

async function weigh(userId: string) {
  return inWriteCtx(await as(userId), (ctx) => createMetric({ ctx, athleteId: userId, input: { type: "body_mass_kg", value: 70, measured_local: "2025-03-01T07:00:00" } }));
}

/** An athlete who authorized an app with `scopes`, and that app's subscription to a receiver. */
async function connected(scopes: string[], opts: { events?: string[]; url?: string; reply?: Parameters<typeof startReceiver>[0] } = {}) {
  const athlete = await api.person();
  const clientId = await rows.app();
  const grantId = await rows.grant(clientId, athlete.id, scopes);
  const rx = await receiver(opts.reply);
  const sub = await rows.subscribe(clientId, opts.url ?? rx.url, opts.events);
  return { athlete, clientId, grantId, rx, sub };
}

async function deliveriesOf(subscriptionId: string) {
  const db = await api.db();
  return db.select().from(webhookDeliveries).where(eq(webhookDeliveries.subscriptionId, subscriptionId)).orderBy(asc(webhookDeliveries.eventSeq));
}

async function attemptsOf(deliveryId: string) {
  const db = await api.db();
  return db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, deliveryId)).orderBy(asc(webhookAttempts.attempt));
}

async function subscription(id: string) {
  const db = await api.db();
  const [s] = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, id));
  return s!;
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("delivery (SPEC §6, CONTRACT §7)", () => {
  it("POSTs the thin event, signed over the exact bytes, with the event and delivery ids, soon after the write", async () => {
    const { athlete, rx, sub } = await connected(["activities.read"]);
    const started = Date.now();
    const activity = await record(athlete.id);
    const [req] = await rx.waitFor((r) => r.length >= 1);
    expect(req!.at - started).toBeLessThan(500); // woken by NOTIFY at commit: the poll is a minute here
    expect(req!.method).toBe("POST");
    expect(req!.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(req!.body) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["athlete_id", "id", "object_id", "object_type", "occurred_at", "type"]);
    expect(body).toMatchObject({ type: "activity.created", athlete_id: athlete.id, object_id: activity.id, object_type: "activity" });
    expect(body.occurred_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(req!.headers["service-event-id"]).toBe(body.id);
    const [delivery] = await until(() => deliveriesOf(sub.id), (d) => d[0]?.status === "succeeded");
    expect(req!.headers["service-delivery-id"]).toBe(delivery!.id);

    const header = req!.headers["service-signature"] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(req!.body, header, sub.secret)).toEqual({ ok: true, timestamp: expect.any(Number) });
    expect(verifyWebhookSignature(req!.body + " ", header, sub.secret).ok).toBe(false);
    expect(verifyWebhookSignature(req!.body, header, "whsec_other").ok).toBe(false);
    // Stripe's verifier checks the same t=…,v1=… scheme (its header name differs; the value is ours).
    const stripe = new Stripe("sk_test_unused");
    expect(stripe.webhooks.constructEvent(req!.body, header, sub.secret)).toMatchObject({ id: body.id, type: "activity.created" });
    expect(() => stripe.webhooks.constructEvent(req!.body, header, "whsec_other")).toThrow();

    const [attempt] = await attemptsOf(delivery!.id);
    expect(attempt).toMatchObject({ attempt: 1, outcome: "response", responseStatus: 200, error: null, requestBody: req!.body });
    expect((attempt!.requestHeaders as Record<string, string>)["Service-Signature"]).toBe(header);
    expect(delivery).toMatchObject({ attemptCount: 1, lockedUntil: null });
  });
});

describe("who receives an event (SPEC §6.2, at fan-out time)", () => {
  async function fannedOut(eventIds: string[]) {
    const db = await api.db();
    await until(
      () => db.select({ f: events.fannedOutAt }).from(events).where(inArray(events.id, eventIds)),
      (r) => r.length === eventIds.length && r.every((e) => e.f !== null),
    );
  }
  async function eventIdOf(objectId: string) {
    const db = await api.db();
    return (await db.select({ id: events.id }).from(events).where(eq(events.objectId, objectId))).map((e) => e.id);
  }

  it("an app without metrics.read never receives metric.created; one with it does", async () => {
    const { athlete, rx, sub } = await connected(["activities.read"]);
    const other = await rows.app("Body Log");
    await rows.grant(other, athlete.id, ["metrics.read"]);
    const rxMetrics = await receiver();
    await rows.subscribe(other, rxMetrics.url);
    const metric = await weigh(athlete.id);
    await record(athlete.id);
    await rx.waitFor((r) => r.length >= 1);
    const [got] = await rxMetrics.waitFor((r) => r.length >= 1);
    expect(JSON.parse(got!.body)).toMatchObject({ type: "metric.created", object_id: metric.id, object_type: "metric" });
    await fannedOut(await eventIdOf(metric.id));
    expect(rx.requests.map((r) => (JSON.parse(r.body) as { type: string }).type)).toEqual(["activity.created"]);
    expect(await deliveriesOf(sub.id)).toHaveLength(1);
    expect(rxMetrics.requests).toHaveLength(1);
  });

  it("a revoked grant receives nothing, and neither does an app the athlete never authorized", async () => {
    const { athlete, rx, clientId, grantId } = await connected(["activities.read"]);
    const db = await api.db();
    const { oauthGrants } = await import("../db/schema");
    await db.update(oauthGrants).set({ revokedAt: new Date() }).where(eq(oauthGrants.id, grantId));
    const stranger = await rows.app("Stranger");
    const rxStranger = await receiver();
    const strangerSub = await rows.subscribe(stranger, rxStranger.url);
    const a = await record(athlete.id);
    await fannedOut(await eventIdOf(a.id));
    expect(clientId).toBeTruthy();
    expect(rx.requests).toHaveLength(0);
    expect(await deliveriesOf(strangerSub.id)).toHaveLength(0);
    expect(rxStranger.requests).toHaveLength(0);
  });

  it("a subscription that does not cover a kind does not receive it", async () => {
    const { athlete, rx } = await connected(["activities.read"], { events: ["activity.created"] });
    const a = await record(athlete.id);
    await inWriteCtx(await as(athlete.id), (ctx) => updateActivity({ ctx, activityId: a.id, input: { name: "Renamed" } }));
    await record(athlete.id, "Second");
    await rx.waitFor((r) => r.length >= 2);
    await fannedOut(await eventIdOf(a.id));
    expect(rx.requests.map((r) => (JSON.parse(r.body) as { type: string }).type)).toEqual(["activity.created", "activity.created"]);
  });

  it("disconnecting stops events and sends athlete.deauthorized once, to that app only", async () => {
    const { athlete, rx, grantId, sub } = await connected(["activities.read"]);
    const other = await rows.app("Other");
    await rows.grant(other, athlete.id, ["activities.read"]);
    const rxOther = await receiver();
    await rows.subscribe(other, rxOther.url);
    await record(athlete.id);
    await rx.waitFor((r) => r.length >= 1);
    await inWriteCtx(await as(athlete.id), (ctx) => disconnectApp({ ctx, grantId }));
    const [, bye] = await rx.waitFor((r) => r.length >= 2);
    expect(JSON.parse(bye!.body)).toMatchObject({ type: "athlete.deauthorized", athlete_id: athlete.id, object_id: athlete.id, object_type: "athlete" });
    const after = await record(athlete.id);
    await fannedOut(await eventIdOf(after.id));
    await rxOther.waitFor((r) => r.length >= 2); // the other app still receives
    expect(rxOther.requests.map((r) => (JSON.parse(r.body) as { type: string }).type)).toEqual(["activity.created", "activity.created"]);
    expect(rx.requests).toHaveLength(2);
    expect((await deliveriesOf(sub.id)).map((d) => d.status)).toEqual(["succeeded", "succeeded"]);
  });
});

describe("retries, the failure streak and disabling (SPEC §3, §6.4, CONTRACT §7)", () => {
  it.each([500, 404])("retries an answer of %i, logs each attempt, and a success resets the counter", async (status) => {
    let n = 0;
    const { athlete, rx, sub } = await connected(["activities.read"], { reply: () => (++n <= 2 ? { status, body: "nope" } : 204) });
    await record(athlete.id);
    await rx.waitFor((r) => r.length >= 3);
    const [d] = await until(() => deliveriesOf(sub.id), (x) => x[0]?.status === "succeeded");
    const attempts = await attemptsOf(d!.id);
    expect(attempts.map((a) => [a.attempt, a.outcome, a.responseStatus, a.responseBodyExcerpt, a.error])).toEqual([
      [1, "response", status, "nope", null],
      [2, "response", status, "nope", null],
      [3, "response", 204, "", null],
    ]);
    expect(new Set(rx.requests.map((r) => r.headers["service-event-id"])).size).toBe(1);
    expect(new Set(rx.requests.map((r) => r.headers["service-delivery-id"])).size).toBe(1);
    expect(d!.attemptCount).toBe(3);
    expect(await subscription(sub.id)).toMatchObject({ status: "active", consecutiveFailures: 0, failingSince: null });
  });

  it("logs an answer's text with its line breaks and tabs, and control and bidi characters shown as \uFFFD (NUL dropped)", async () => {
    const body = "\u001b[31mred\u001b[0m \u202egnp.exe\u0000\r\n\tline 2 \u0085\u2066x\u2069 é 🏃";
    const { athlete, rx, sub } = await connected(["activities.read"], { reply: () => ({ status: 500, body }) });
    await record(athlete.id);
    await rx.waitFor((r) => r.length >= 1);
    const [d] = await until(() => deliveriesOf(sub.id), (x) => x[0] !== undefined && x[0].attemptCount >= 1);
    const [first] = await until(() => attemptsOf(d!.id), (a) => a.length >= 1);
    expect(first!.responseBodyExcerpt).toBe("\uFFFD[31mred\uFFFD[0m \uFFFDgnp.exe\r\n\tline 2 \uFFFD\uFFFDx\uFFFD é 🏃");
  });

  it("retries a refused connection, logged as not_sent, and counts the streak until a success", async () => {
    const dead = await refusedUrl();
    const { athlete, rx, sub } = await connected(["activities.read"], { url: dead });
    await record(athlete.id);
    const failing = await until(() => subscription(sub.id), (s) => s.consecutiveFailures >= 2);
    expect(failing.failingSince).toBeInstanceOf(Date);
    const [d] = await deliveriesOf(sub.id);
    const attempts = await attemptsOf(d!.id);
    expect(attempts[0]).toMatchObject({ attempt: 1, outcome: "not_sent", error: "connection_refused", responseStatus: null, requestHeaders: {}, requestBody: "" });
    const db = await api.db();
    await db.update(webhookSubscriptions).set({ url: rx.url }).where(eq(webhookSubscriptions.id, sub.id));
    await rx.waitFor((r) => r.length >= 1);
    const healed = await until(() => subscription(sub.id), (s) => s.consecutiveFailures === 0);
    expect(healed.failingSince).toBeNull();
    const done = await until(() => deliveriesOf(sub.id), (x) => x[0]?.status === "succeeded");
    expect((await attemptsOf(done[0]!.id)).at(-1)).toMatchObject({ outcome: "response", responseStatus: 200 });
  });

  it("disables the subscription at exactly 20 consecutive failures and fails its pending deliveries", async () => {
    const { athlete, rx, sub } = await connected(["activities.read"], { reply: () => 500 });
    // The later two after the streak began, so every attempt is a counted probe (deliveries in
    // flight beside the first failure are not counted: the test below).
    await record(athlete.id, "Run 0");
    await until(() => subscription(sub.id), (s) => s.consecutiveFailures >= 1);
    for (let i = 1; i < 3; i++) await record(athlete.id, `Run ${i}`);
    const off = await until(() => subscription(sub.id), (s) => s.status === "disabled", 20_000);
    expect(off).toMatchObject({ consecutiveFailures: 20, disabledReason: expect.stringContaining("20 consecutive") });
    expect(off.disabledAt).toBeInstanceOf(Date);
    // A whole pass of the runner after the disable, ending with nothing in flight: anything it
    // would still send would have been claimed in it.
    await delivery.idle();
    expect(rx.requests).toHaveLength(20);
    const ds = await deliveriesOf(sub.id);
    expect(ds.map((d) => d.status)).toEqual(["failed", "failed", "failed"]);
    // Each says why, the two never sent too: the log shows them failed with no attempt.
    expect(ds.map((d) => d.failureReason)).toEqual(["subscription_disabled", "subscription_disabled", "subscription_disabled"]);
    expect(ds.reduce((n, d) => n + d.attemptCount, 0)).toBe(20);
    // Nothing more is sent once disabled, new events included: a pass that began after the
    // write has fanned it out (to no delivery of this subscription) and claimed what was due.
    const after = await record(athlete.id, "After");
    await delivery.idle();
    const db = await api.db();
    const [fanned] = await db.select({ at: events.fannedOutAt }).from(events).where(eq(events.objectId, after.id));
    expect(fanned!.at).toBeInstanceOf(Date);
    expect(await deliveriesOf(sub.id)).toHaveLength(3);
    expect(rx.requests).toHaveLength(20);
  });

  it("probes a failing subscription one delivery at a time while a healthy one delivers at once", async () => {
    let healthy = false;
    let inFlight = 0;
    let maxInFlight = 0;
    const slow = await connected(["activities.read"], {
      reply: () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        setTimeout(() => inFlight--, 30);
        return healthy ? { status: 200, delayMs: 30 } : { status: 503, delayMs: 30 };
      },
    });
    const good = await rows.app("Good");
    await rows.grant(good, slow.athlete.id, ["activities.read"]);
    const rxGood = await receiver();
    await rows.subscribe(good, rxGood.url);

    await record(slow.athlete.id, "First");
    await until(() => subscription(slow.sub.id), (s) => s.consecutiveFailures >= 1);
    maxInFlight = 0;
    const head = slow.rx.requests[0]!.headers["service-event-id"];
    const t0 = Date.now();
    for (let i = 0; i < 8; i++) await record(slow.athlete.id, `Run ${i}`);
    await rxGood.waitFor((r) => r.length >= 9, 3000);
    expect(Date.now() - t0).toBeLessThan(2000);
    await until(() => subscription(slow.sub.id), (s) => s.consecutiveFailures >= 4);
    // While failing: one request at a time, always the oldest pending delivery.
    expect(maxInFlight).toBe(1);
    expect(new Set(slow.rx.requests.map((r) => r.headers["service-event-id"]))).toEqual(new Set([head]));
    healthy = true;
    await slow.rx.waitFor((r) => new Set(r.map((x) => x.headers["service-event-id"])).size === 9, 5000);
    await until(() => deliveriesOf(slow.sub.id), (ds) => ds.every((d) => d.status === "succeeded"));
    expect((await subscription(slow.sub.id)).consecutiveFailures).toBe(0);
  });
});

describe("a subscription that goes down with deliveries in flight (CONTRACT §7)", () => {
  it("counts the streak once for the deliveries already in flight, then probes one delivery at a time", async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const { athlete, rx, sub } = await connected(["activities.read"], {
      reply: () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        setTimeout(() => inFlight--, 400);
        return { status: 500, delayMs: 400 };
      },
    });
    // Healthy when these are claimed, so they go out together (as many as a subscription may
    // have in flight); all of them then fail.
    const firstWave = MAX_IN_FLIGHT_PER_SUBSCRIPTION;
    for (let i = 0; i < firstWave; i++) await record(athlete.id, `Run ${i}`);
    const db = await api.db();
    const attemptCount = async () =>
      (
        await db
          .select({ id: webhookAttempts.id })
          .from(webhookAttempts)
          .innerJoin(webhookDeliveries, eq(webhookDeliveries.id, webhookAttempts.deliveryId))
          .where(eq(webhookDeliveries.subscriptionId, sub.id))
      ).length;
    await rx.waitFor((r) => r.length >= firstWave, 5000);
    expect(maxInFlight).toBeGreaterThan(1); // they really were in flight together
    await until(attemptCount, (n) => n >= firstWave);
    // Four failed attempts logged, one failure counted: the rest were in flight beside it.
    expect((await subscription(sub.id)).consecutiveFailures).toBe(1);
    // Every later request is a probe.
    maxInFlight = 0;
    // From here one probe at a time, each counted, always the oldest pending delivery.
    await until(() => subscription(sub.id), (s) => s.consecutiveFailures >= 3, 10_000);
    expect(maxInFlight).toBe(1);
    const probes = rx.requests.slice(firstWave).map((r) => r.headers["service-event-id"]);
    expect(probes.length).toBeGreaterThanOrEqual(2);
    const [oldest] = await deliveriesOf(sub.id);
    const oldestEvent = rx.requests.find((r) => r.headers["service-delivery-id"] === oldest!.id)!.headers["service-event-id"];
    expect(new Set(probes)).toEqual(new Set([oldestEvent]));
    const ds = await deliveriesOf(sub.id);
    expect(ds.reduce((n, d) => n + d.attemptCount, 0)).toBe(await attemptCount());
    rx.setReply(() => 200);
    await until(() => deliveriesOf(sub.id), (x) => x.every((d) => d.status === "succeeded"), 10_000);
    expect((await subscription(sub.id)).consecutiveFailures).toBe(0);
  });
});

describe("secret rotation (CONTRACT §5)", () => {
  it("signs with both secrets for 24 hours after a rotation, then with the new one only", async () => {
    const { athlete, rx, sub } = await connected(["activities.read"]);
    const db = await api.db();
    const previous = "whsec_previous_secret_value";
    await db
      .update(webhookSubscriptions)
      .set({ previousSecretSealed: seal(previous), previousSecretExpiresAt: new Date(Date.now() + 86_400_000) })
      .where(eq(webhookSubscriptions.id, sub.id));
    await record(athlete.id);
    const [req] = await rx.waitFor((r) => r.length >= 1);
    const header = req!.headers["service-signature"] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(req!.body, header, sub.secret).ok).toBe(true);
    expect(verifyWebhookSignature(req!.body, header, previous).ok).toBe(true);
    const stripe = new Stripe("sk_test_unused");
    expect(() => stripe.webhooks.constructEvent(req!.body, header, previous)).not.toThrow();
    expect(() => stripe.webhooks.constructEvent(req!.body, header, sub.secret)).not.toThrow();

    await db.update(webhookSubscriptions).set({ previousSecretExpiresAt: new Date(Date.now() - 1000) }).where(eq(webhookSubscriptions.id, sub.id));
    await record(athlete.id);
    const [, later] = await rx.waitFor((r) => r.length >= 2);
    const h2 = later!.headers["service-signature"] as string;
    expect(h2).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(later!.body, h2, previous).ok).toBe(false);
  });
});
