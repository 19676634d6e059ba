import { afterAll, describe, expect, it } from "vitest";
import { createActivity } from "../activities/create-activity";
import { resetEnvForTests } from "../env";
import { setupApi } from "../testing/fixtures";
import { startReceiver, type Receiver } from "../testing/webhook-receiver";
import { webhookRows } from "../testing/webhook-rows";
import { MAX_IN_FLIGHT_PER_SUBSCRIPTION } from "./policy";
import { startLocalRunner, type LocalRunner } from "./local-runner";
import { inWriteCtx } from "../http/operation";

// Issue 9: an endpoint that hangs for the whole timeout must not hold every delivery slot of a
// worker. Real receivers on loopback, the real runner, the real database.

process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
resetEnvForTests();

const api = setupApi();
const rows = webhookRows(api.db);
const receivers: Receiver[] = [];
let runner: LocalRunner | undefined;
/** Each test's runner and receivers go before the next test: two runners would share its work. */
async function finish() {
  // Hanging requests end when their receiver closes; then the runner records them and stops.
  for (const r of receivers.splice(0)) await r.close();
  await runner?.stop();
  runner = undefined;
}
afterAll(finish);

async function receiver(...args: Parameters<typeof startReceiver>) {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

/** An athlete, an app they authorized, its subscription to `url`, and a way to write activities. */
async function subscribed(url: string) {
  const athlete = await api.person();
  const clientId = await rows.app();
  await rows.grant(clientId, athlete.id, ["activities.read"]);
  await rows.subscribe(clientId, url, ["activity.created"]);
  const ctx = { db: await api.db(), actor: { kind: "session" as const, userId: athlete.id } };
  return (name: string) =>
    inWriteCtx(ctx, (ctx) => createActivity({ ctx, athleteId: athlete.id, input: { name, sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 } }));
}

describe("a subscriber that hangs (issue 9)", () => {
  it("holds at most MAX_IN_FLIGHT_PER_SUBSCRIPTION of a runner's slots; other subscriptions' deliveries arrive meanwhile", { timeout: 60_000 }, async () => {
    const HANG_MS = 8_000; // the delivery timeout here: the hanging requests end no sooner
    const hanging = await receiver(() => null);
    const healthy = await receiver(() => 200);
    const writeHanging = await subscribed(hanging.url);
    const writeHealthy = await subscribed(healthy.url);
    // A backlog for the hanging endpoint, older than anything of the healthy one, and more than
    // the runner has slots: oldest first, the hanging endpoint's deliveries come first.
    const CONCURRENCY = 16;
    for (let i = 0; i < CONCURRENCY + 8; i++) await writeHanging(`Hang ${i}`);
    for (let i = 0; i < 3; i++) await writeHealthy(`Healthy ${i}`);

    const started = Date.now();
    runner = startLocalRunner({ db: await api.db(), allowPrivate: true, concurrency: CONCURRENCY, pollMs: 60_000, timeoutMs: HANG_MS });
    await hanging.waitFor((r) => r.length >= MAX_IN_FLIGHT_PER_SUBSCRIPTION, 5_000);
    // Long before any hanging request ends, the healthy subscription's deliveries have arrived.
    await healthy.waitFor((r) => r.length >= 3, HANG_MS / 2);
    expect(Date.now() - started).toBeLessThan(HANG_MS / 2);

    // A later write is claimed in a later pass, which would have taken more of the hanging
    // endpoint's backlog had the cap allowed it.
    await writeHealthy("Later");
    await healthy.waitFor((r) => r.length >= 4, HANG_MS / 2);
    expect(Date.now() - started).toBeLessThan(HANG_MS);
    expect(hanging.requests).toHaveLength(MAX_IN_FLIGHT_PER_SUBSCRIPTION);
    await finish();
  });

  it("several slow subscribers, each answering inside the timeout, do not hold every slot between them", { timeout: 60_000 }, async () => {
    const SLOW_MS = 6_000; // each answers 200 this late: never failing, never timed out
    const CONCURRENCY = 8;
    const slowOnes = await Promise.all([0, 1, 2].map(() => receiver(() => ({ status: 200, delayMs: SLOW_MS }))));
    const healthy = await receiver(() => 200);
    // Three slow subscriptions can hold 3 × MAX_IN_FLIGHT_PER_SUBSCRIPTION attempts: more than the slots.
    expect(slowOnes.length * MAX_IN_FLIGHT_PER_SUBSCRIPTION).toBeGreaterThan(CONCURRENCY);
    for (const slowOne of slowOnes) {
      const write = await subscribed(slowOne.url);
      for (let i = 0; i < 6; i++) await write(`Slow ${i}`);
    }
    const writeHealthy = await subscribed(healthy.url);
    for (let i = 0; i < 3; i++) await writeHealthy(`Healthy ${i}`);

    const started = Date.now();
    runner = startLocalRunner({ db: await api.db(), allowPrivate: true, concurrency: CONCURRENCY, pollMs: 60_000, timeoutMs: 8_000 });
    // The healthy subscription's deliveries arrive before any slow one has answered.
    await healthy.waitFor((r) => r.length >= 3, SLOW_MS - 1_000);
    expect(Date.now() - started).toBeLessThan(SLOW_MS);
    // And each slow subscription still has no more than its cap in flight.
    for (const slowOne of slowOnes) expect(slowOne.requests.length).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_SUBSCRIPTION);
    await finish();
  });
});
