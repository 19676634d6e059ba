import { beforeAll, describe, expect, it, vi } from "vitest";
import { InngestTestEngine } from "@inngest/test";
import { asc, eq, sql } from "drizzle-orm";
import { createActivity } from "@/lib/activities/create-activity";
import { webhookAttempts, webhookDeliveries, webhookSubscriptions } from "@/lib/db/schema";
import { resetEnvForTests } from "@/lib/env";
import { setupApi } from "@/lib/testing/fixtures";
import { refusedUrl, startReceiver } from "@/lib/testing/webhook-receiver";
import { webhookRows } from "@/lib/testing/webhook-rows";
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION } from "@/lib/webhooks/policy";
import { LOCAL_RUNNER_CONCURRENCY } from "@/lib/webhooks/runner-defaults";
import { claimDelivery, type ClaimedDelivery } from "@/lib/webhooks/claim-deliveries";
import { deliverOnce } from "@/lib/webhooks/deliver-once";
import { fanOutEvents } from "@/lib/webhooks/fan-out";
import { recordAttempt } from "@/lib/webhooks/record-attempt";
import { verifyWebhookSignature } from "@/lib/webhooks/signature";
import { DELIVERIES_WAITING, DELIVERY_DUE, deliveryDue } from "../client";
import { deliverWebhookFn } from "./deliver-webhook";
import { handOutWaitingFn } from "./hand-out-waiting";
import { fanOutEventsFn } from "./fan-out-events";
import { inWriteCtx } from "../../lib/http/operation";

process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
process.env.WEBHOOK_RETRY_SCHEDULE_S = "0";
resetEnvForTests();

const api = setupApi();
const rows = webhookRows(api.db);
beforeAll(() => resetEnvForTests());

/**
 * Every sleep the function may take, answered at once (an unmocked sleep never resolves), and
 * every event it may send. Pass copies: the engine records step results into the array given.
 */
const sleeps = Array.from({ length: 40 }, (_, i) => ({ id: `wait-${i}`, handler: () => undefined }));
const sends = ["hand-out-waiting", "dispatch-waiting-0", "dispatch-next-probe", "dispatch-due", ...Array.from({ length: 20 }, (_, i) => `dispatch-${i}`)].map((id) => ({
  id,
  handler: () => ({ ids: [] }),
}));

async function setup(reply: Parameters<typeof startReceiver>[0], opts: { url?: string } = {}) {
  const athlete = await api.person();
  const clientId = await rows.app();
  await rows.grant(clientId, athlete.id, ["activities.read"]);
  const rx = await startReceiver(reply);
  const sub = await rows.subscribe(clientId, opts.url ?? rx.url);
  const ctx = { db: await api.db(), actor: { kind: "session" as const, userId: athlete.id } };
  const record = () =>
    inWriteCtx(ctx, (ctx) => createActivity({ ctx, athleteId: athlete.id, input: { name: "Run", sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 } }));
  return { athlete, rx, sub, record };
}

async function deliveries(subscriptionId: string) {
  const db = await api.db();
  return db.select().from(webhookDeliveries).where(eq(webhookDeliveries.subscriptionId, subscriptionId)).orderBy(asc(webhookDeliveries.eventSeq));
}

describe("fan-out-events (Inngest)", () => {
  it("fans out committed events and dispatches one aas/delivery.due per delivery", async () => {
    const { sub, record, rx } = await setup(() => 200);
    await record();
    await record();
    const t = new InngestTestEngine({ function: fanOutEventsFn, events: [{ name: "aas/outbox.appended", data: {} }], steps: [...sends] });
    const { result, ctx } = await t.execute();
    const ds = await deliveries(sub.id);
    expect(ds).toHaveLength(2);
    expect(result).toMatchObject({ deliveries: 2, swept: 0 });
    expect(ctx.step.sendEvent).toHaveBeenCalledWith(
      "dispatch-0",
      ds.map((d) => ({ id: `deliver-${d.id}-${d.updatedAt.getTime()}`, name: DELIVERY_DUE, data: { delivery_id: d.id, subscription_id: sub.id } })),
    );
    await rx.close();
  });

  it("hands out a delivery put back in the queue when that is announced, under a new event id", async () => {
    const { sub, record, rx } = await setup(() => 200);
    await record();
    await fanOutEvents(await api.db());
    const [d] = await deliveries(sub.id);
    const db = await api.db();
    // As a redelivery leaves it: failed before, pending again and due now.
    await db.update(webhookDeliveries).set({ status: "pending", attemptCount: 1, updatedAt: new Date(Date.now() + 5) }).where(eq(webhookDeliveries.id, d!.id));
    const [again] = await deliveries(sub.id);
    const t = new InngestTestEngine({ function: fanOutEventsFn, events: [{ name: "aas/outbox.appended", data: { queue: true } }], steps: [...sends] });
    const { result, ctx } = await t.execute();
    expect(result).toMatchObject({ deliveries: 0 });
    // Every due delivery no worker holds (the first test's included), this one under its new version.
    expect(ctx.step.sendEvent).toHaveBeenCalledWith(
      "dispatch-due",
      expect.arrayContaining([
        { id: `deliver-${d!.id}-${again!.updatedAt.getTime()}`, name: DELIVERY_DUE, data: { delivery_id: d!.id, subscription_id: sub.id } },
      ]),
    );
    await rx.close();
  });
  it("the minute's sweep hands out an overdue delivery whose hand-out never reached a claim under an id of its own, not the one Inngest already took", async () => {
    const { sub, record, rx } = await setup(() => 200);
    await record();
    const [fanned] = (await fanOutEvents(await api.db())).deliveries.filter((x) => x.subscriptionId === sub.id);
    // As if fanned out and handed out ten minutes ago, and its run failed before claiming (the
    // database was unreachable): the row is unchanged since, and due long ago.
    const handedOut = deliveryDue({ ...fanned!, version: String(Number(fanned!.version) - 10 * 60_000) }).id;
    const db = await api.db();
    await db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: sql`${webhookDeliveries.nextAttemptAt} - interval '10 minutes'`, updatedAt: sql`${webhookDeliveries.updatedAt} - interval '10 minutes'` })
      .where(eq(webhookDeliveries.id, fanned!.id));
    const [row] = await deliveries(sub.id);
    expect(deliveryDue({ id: row!.id, subscriptionId: sub.id, version: String(row!.updatedAt.getTime()) }).id).toBe(handedOut);
    const sweep = (ts: number) =>
      new InngestTestEngine({ function: fanOutEventsFn, events: [{ name: "inngest/scheduled.timer", data: { cron: "* * * * *" }, ts }], steps: [...sends] });
    const ids = async (ts: number) => {
      const { ctx } = await sweep(ts).execute();
      const call = vi.mocked(ctx.step.sendEvent).mock.calls.find(([stepId]) => stepId === "dispatch-due");
      return ((call?.[1] ?? []) as { id: string; data: { delivery_id: string } }[]).filter((e) => e.data.delivery_id === fanned!.id).map((e) => e.id);
    };
    const first = await ids(Date.now());
    expect(first).toHaveLength(1);
    expect(first[0]).not.toBe(handedOut);
    // The next minute's sweep passes over it (just handed out); once that hand-out is two
    // minutes old and the delivery still unclaimed, the sweep's is a hand-out of its own again.
    expect(await ids(Date.now() + 60_000)).toEqual([]);
    await db.update(webhookDeliveries).set({ updatedAt: new Date(Date.now() - 3 * 60_000) }).where(eq(webhookDeliveries.id, fanned!.id));
    const next = await ids(Date.now() + 120_000);
    expect(next).toHaveLength(1);
    expect(next[0]).not.toBe(first[0]);
    await rx.close();
  });
});

describe("deliver-webhook (Inngest)", () => {
  it("runs at most MAX_IN_FLIGHT_PER_SUBSCRIPTION attempts of a subscription, and at most the local runner's slots in all: hanging endpoints leave fan-out and uploads room", () => {
    expect(deliverWebhookFn.opts.concurrency).toEqual([
      { key: "event.data.subscription_id", limit: MAX_IN_FLIGHT_PER_SUBSCRIPTION },
      { limit: LOCAL_RUNNER_CONCURRENCY },
    ]);
  });

  it("a run beyond its subscription's in-flight cap sends nothing until a slot frees, then delivers", async () => {
    const { sub, record, rx } = await setup(() => 200);
    for (let i = 0; i <= MAX_IN_FLIGHT_PER_SUBSCRIPTION; i++) await record();
    await fanOutEvents(await api.db());
    const ds = await deliveries(sub.id);
    const db = await api.db();
    // As if other runs had these in flight: claimed, their leases running.
    const held: ClaimedDelivery[] = [];
    for (const d of ds.slice(0, MAX_IN_FLIGHT_PER_SUBSCRIPTION)) {
      const c = await claimDelivery(db, d.id);
      if (c.state === "claimed") held.push(c.delivery);
    }
    expect(held).toHaveLength(MAX_IN_FLIGHT_PER_SUBSCRIPTION);
    const soonestLeaseEnd = Math.min(...(await deliveries(sub.id)).filter((d) => d.lockedUntil).map((d) => d.lockedUntil!.getTime()));
    const last = ds.at(-1)!;
    let freedAt = 0;
    const t = new InngestTestEngine({
      function: deliverWebhookFn,
      events: [{ name: DELIVERY_DUE, data: { delivery_id: last.id, subscription_id: sub.id } }],
      steps: [
        {
          // While the run sleeps, one of the others finishes.
          id: "wait-0",
          handler: async () => {
            expect(rx.requests).toHaveLength(0);
            await recordAttempt(db, {
              deliveryId: held[0]!.id,
              subscriptionId: sub.id,
              startedAt: new Date(),
              requestHeaders: {},
              requestBody: "{}",
              result: { outcome: "response", status: 204, contentType: null, bodyExcerpt: "", bodyComplete: true, bodyError: null, cacheControl: null, expires: null, durationMs: 1 },
              probe: false,
            });
            freedAt = Date.now();
          },
        },
        ...sleeps.slice(1),
        ...sends,
      ],
    });
    const { result, ctx } = await t.execute();
    // It slept until the soonest lease would end (or its worker renew it), not a fixed time.
    const [[, until]] = vi.mocked(ctx.step.sleepUntil).mock.calls as unknown as [[string, Date]];
    expect(until.getTime()).toBeGreaterThanOrEqual(soonestLeaseEnd);
    expect(result).toMatchObject({ state: "succeeded" });
    expect(rx.requests.map((r) => r.headers["service-delivery-id"])).toEqual([last.id]);
    expect(rx.requests[0]!.at).toBeGreaterThanOrEqual(freedAt);
    await rx.close();
  });

  it("sends a signed delivery in one step and records it", async () => {
    const { sub, record, rx } = await setup(() => 200);
    await record();
    await fanOutEvents(await api.db());
    const [d] = await deliveries(sub.id);
    const t = new InngestTestEngine({
      function: deliverWebhookFn,
      events: [{ name: DELIVERY_DUE, data: { delivery_id: d!.id, subscription_id: sub.id } }],
      steps: [...sleeps, ...sends],
    });
    const { result } = await t.execute();
    expect(result).toMatchObject({ state: "succeeded" });
    expect(rx.requests).toHaveLength(1);
    const req = rx.requests[0]!;
    expect(verifyWebhookSignature(req.body, req.headers["service-signature"] as string, sub.secret).ok).toBe(true);
    expect(req.headers["service-delivery-id"]).toBe(d!.id);
    expect((await deliveries(sub.id))[0]).toMatchObject({ status: "succeeded", attemptCount: 1 });
    await rx.close();
  });

  it("retries failed attempts with a sleep between them until a 2xx, then resets the counter", async () => {
    let n = 0;
    const { sub, record, rx } = await setup(() => (++n <= 2 ? 500 : 200));
    await record();
    await fanOutEvents(await api.db());
    const [d] = await deliveries(sub.id);
    const t = new InngestTestEngine({
      function: deliverWebhookFn,
      events: [{ name: DELIVERY_DUE, data: { delivery_id: d!.id, subscription_id: sub.id } }],
      steps: [...sleeps, ...sends],
    });
    const { result, ctx } = await t.execute();
    expect(result).toMatchObject({ state: "succeeded", subscriptionRecovered: true });
    expect(ctx.step.sleepUntil).toHaveBeenCalledWith("wait-0", expect.any(Date));
    expect(rx.requests).toHaveLength(3);
    const db = await api.db();
    const attempts = await db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, d!.id)).orderBy(asc(webhookAttempts.attempt));
    expect(attempts.map((a) => a.responseStatus)).toEqual([500, 500, 200]);
    const [s] = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, sub.id));
    expect(s).toMatchObject({ consecutiveFailures: 0, failingSince: null });
    await rx.close();
  });

  it("lets only the oldest pending delivery of a failing subscription through", async () => {
    const dead = await refusedUrl();
    const { sub, record, rx } = await setup(() => 200, { url: dead });
    await record();
    await record();
    const fannedOut = (await fanOutEvents(await api.db())).deliveries;
    const [first, second] = await deliveries(sub.id);
    // The event fan-out handed the second delivery out with: Inngest drops an id it has seen.
    const firstHandOut = deliveryDue(fannedOut.find((x) => x.id === second!.id)!).id;
    const db = await api.db();
    await db.update(webhookSubscriptions).set({ consecutiveFailures: 3, failingSince: new Date() }).where(eq(webhookSubscriptions.id, sub.id));
    const queued = new InngestTestEngine({
      function: deliverWebhookFn,
      events: [{ name: DELIVERY_DUE, data: { delivery_id: second!.id, subscription_id: sub.id } }],
      steps: [...sleeps, ...sends],
    });
    expect((await queued.execute()).result).toEqual({ state: "queued" });
    expect((await deliveries(sub.id))[1]!.attemptCount).toBe(0);

    // The probe succeeds once the endpoint is back; the delivery that waited is dispatched again.
    await db.update(webhookSubscriptions).set({ url: rx.url }).where(eq(webhookSubscriptions.id, sub.id));
    const probe = new InngestTestEngine({
      function: deliverWebhookFn,
      events: [{ name: DELIVERY_DUE, data: { delivery_id: first!.id, subscription_id: sub.id } }],
      steps: [...sleeps, ...sends],
    });
    const { result, ctx } = await probe.execute();
    expect(result).toMatchObject({ state: "succeeded", subscriptionRecovered: true });
    const [s] = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, sub.id));
    const asOf = Math.floor(s!.updatedAt.getTime());
    expect(ctx.step.sendEvent).toHaveBeenCalledWith("hand-out-waiting", { id: `waiting-${sub.id}-v${asOf}`, name: DELIVERIES_WAITING, data: { subscription_id: sub.id, as_of: asOf } });
    const handOut = new InngestTestEngine({
      function: handOutWaitingFn,
      events: [{ name: DELIVERIES_WAITING, data: { subscription_id: sub.id, as_of: asOf } }],
      steps: [...sends],
    });
    const { ctx: handOutCtx } = await handOut.execute();
    expect(handOutCtx.step.sendEvent).toHaveBeenCalledWith("dispatch-waiting-0", [
      { id: expect.stringMatching(`^deliver-${second!.id}-\\d+$`), name: DELIVERY_DUE, data: { delivery_id: second!.id, subscription_id: sub.id } },
    ]);
    const waitingCall = handOutCtx.step.sendEvent.mock.calls.find(([name]) => name === "dispatch-waiting-0") as [string, { id: string }[]];
    expect(waitingCall[1][0]!.id).not.toBe(firstHandOut);
    await rx.close();
  });

  it("hands out what waited behind the probe when the recovering attempt's step runs again (its first result never reached Inngest), once", async () => {
    const { sub, record, rx } = await setup(() => 200);
    for (let i = 0; i < 3; i++) await record();
    const db = await api.db();
    await fanOutEvents(db);
    const ds = await deliveries(sub.id);
    await db.update(webhookSubscriptions).set({ consecutiveFailures: 3, failingSince: new Date() }).where(eq(webhookSubscriptions.id, sub.id));
    // The two behind the probe end their runs waiting.
    expect(await claimDelivery(db, ds[1]!.id)).toEqual({ state: "wait", until: null });
    expect(await claimDelivery(db, ds[2]!.id)).toEqual({ state: "wait", until: null });
    // The probe's attempt step recovers the subscription, but its result is lost: Inngest runs the step again.
    const first = await deliverOnce(db, ds[0]!.id, { allowPrivate: true, schedule: [0] });
    expect(first).toMatchObject({ state: "succeeded", subscriptionRecovered: true });
    const again = new InngestTestEngine({
      function: deliverWebhookFn,
      events: [{ name: DELIVERY_DUE, data: { delivery_id: ds[0]!.id, subscription_id: sub.id } }],
      steps: [...sleeps, ...sends],
    });
    const { result, ctx } = await again.execute();
    expect(result).toMatchObject({ state: "succeeded", waitingAsOf: (first as { waitingAsOf: number }).waitingAsOf });
    const [[, waiting]] = vi.mocked(ctx.step.sendEvent).mock.calls.filter(([id]) => id === "hand-out-waiting") as unknown as [[string, { id: string; data: object }]];
    // The same hand-out as the first run's would have been: Inngest takes one of them.
    expect(waiting.id).toBe(`waiting-${sub.id}-v${(first as { waitingAsOf: number }).waitingAsOf}`);
    const handOut = () => new InngestTestEngine({ function: handOutWaitingFn, events: [{ name: DELIVERIES_WAITING, data: waiting.data }], steps: [...sends] }).execute();
    const { ctx: handOutCtx } = await handOut();
    const sent = vi.mocked(handOutCtx.step.sendEvent).mock.calls.filter(([id]) => id === "dispatch-waiting-0").flatMap(([, e]) => e as { data: { delivery_id: string } }[]);
    expect(sent.map((e) => e.data.delivery_id)).toEqual([ds[1]!.id, ds[2]!.id]);
    // Found once more (a duplicate run of the probe, another copy of the event): nothing is handed out twice.
    expect((await handOut()).result).toEqual({ handedOut: 0, done: true });
    const dup = await new InngestTestEngine({
      function: deliverWebhookFn,
      events: [{ name: DELIVERY_DUE, data: { delivery_id: ds[0]!.id, subscription_id: sub.id } }],
      steps: [...sleeps, ...sends],
    }).execute();
    expect(dup.result).toEqual({ state: "succeeded" });
    expect(vi.mocked(dup.ctx.step.sendEvent).mock.calls.map(([id]) => id)).not.toContain("hand-out-waiting");
    expect(rx.requests).toHaveLength(1);
    await rx.close();
  });

  it("a healthy subscription's duplicate run hands out nothing of the deliveries queued behind it", async () => {
    const { sub, record, rx } = await setup(() => 200);
    for (let i = 0; i < 3; i++) await record();
    const db = await api.db();
    await fanOutEvents(db);
    const ds = await deliveries(sub.id);
    // The first succeeds; the others' runs are still queued. A second hand-out of the first runs.
    await deliverOnce(db, ds[0]!.id, { allowPrivate: true, schedule: [0] });
    const { result, ctx } = await new InngestTestEngine({
      function: deliverWebhookFn,
      events: [{ name: DELIVERY_DUE, data: { delivery_id: ds[0]!.id, subscription_id: sub.id } }],
      steps: [...sleeps, ...sends],
    }).execute();
    expect(result).toEqual({ state: "succeeded" });
    expect(vi.mocked(ctx.step.sendEvent).mock.calls.map(([id]) => id)).not.toContain("hand-out-waiting");
    await rx.close();
  });
});
