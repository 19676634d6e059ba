import { describe, expect, it } from "vitest";
import { asc, eq, inArray, sql } from "drizzle-orm";
import { createActivity } from "../activities/create-activity";
import { webhookAttempts, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { setupApi } from "../testing/fixtures";
import { webhookRows } from "../testing/webhook-rows";
import { claimDelivery, claimDueDeliveries, type ClaimedDelivery } from "./claim-deliveries";
import { MAX_ATTEMPTS, MAX_IN_FLIGHT_PER_SUBSCRIPTION } from "./policy";
import { requeueDeliveries } from "./subscriptions/requeue";
import { CLAIM_LEASE_S, claimLease } from "./claim-lease";
import { fanOutEvents } from "./fan-out";
import { recordAttempt, recordInterrupted } from "./record-attempt";
import { ATTEMPT_INTERRUPTED as INTERRUPTED } from "./subscriptions/schemas";
import { inWriteCtx } from "../http/operation";
import { endGrant } from "../oauth-grants/end-grant";
import { inTransaction } from "../db/transaction";
import { untilWaitingOnLock } from "../testing/lock-wait";

// The claim rules every runner shares (the local runner's batch claim, the Inngest runner's
// claim of one named delivery), against the real database.

const api = setupApi();
const rows = webhookRows(api.db);

/** A subscription (nothing listens at its URL: nothing here sends) with `n` pending deliveries. */
async function subscriptionWith(n: number) {
  const athlete = await api.person();
  const clientId = await rows.app();
  await rows.grant(clientId, athlete.id, ["activities.read"]);
  const sub = await rows.subscribe(clientId, "http://127.0.0.1:9/hook", ["activity.created"]);
  const db = await api.db();
  const ctx = { db, actor: { kind: "session" as const, userId: athlete.id } };
  for (let i = 0; i < n; i++) {
    await inWriteCtx(ctx, (ctx) => createActivity({ ctx, athleteId: athlete.id, input: { name: `Run ${i}`, sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 } }));
  }
  while ((await fanOutEvents(db)).events > 0);
  const ids = (await db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.subscriptionId, sub.id)).orderBy(webhookDeliveries.eventSeq)).map(
    (r) => r.id,
  );
  expect(ids).toHaveLength(n);
  return { sub, ids };
}

/** Records a 2xx for a claimed delivery, as a runner does once it is answered. */
async function succeed(d: Pick<ClaimedDelivery, "id" | "subscriptionId" | "probe">) {
  await recordAttempt(await api.db(), {
    deliveryId: d.id,
    subscriptionId: d.subscriptionId,
    startedAt: new Date(),
    requestHeaders: {},
    requestBody: "{}",
    result: { outcome: "response", status: 204, contentType: null, bodyExcerpt: "", bodyComplete: true, bodyError: null, cacheControl: null, expires: null, durationMs: 1 },
    probe: d.probe,
  });
}

/** Records a 500 for a claimed probe, as a runner does once it is answered. */
async function answered500(deliveryId: string, subscriptionId: string) {
  return recordAttempt(await api.db(), {
    deliveryId,
    subscriptionId,
    startedAt: new Date(),
    requestHeaders: {},
    requestBody: "{}",
    result: { outcome: "response", status: 500, contentType: null, bodyExcerpt: "", bodyComplete: true, bodyError: null, cacheControl: null, expires: null, durationMs: 1 },
    probe: true,
  });
}

const of = (claimed: ClaimedDelivery[], subscriptionId: string) => claimed.filter((d) => d.subscriptionId === subscriptionId);

describe("deliveries in flight per subscription (issue 9: a hanging endpoint cannot take every slot)", () => {
  it("a batch claim takes at most MAX_IN_FLIGHT_PER_SUBSCRIPTION of one subscription, counting those in flight, and fills its room with others'", async () => {
    const busy = await subscriptionWith(MAX_IN_FLIGHT_PER_SUBSCRIPTION + 6);
    const other = await subscriptionWith(2);
    const db = await api.db();
    const first = await claimDueDeliveries(db, { limit: 100 });
    // Oldest events first, and no more than the cap, though far more are due.
    expect(of(first, busy.sub.id).map((d) => d.id)).toEqual(busy.ids.slice(0, MAX_IN_FLIGHT_PER_SUBSCRIPTION));
    expect(of(first, other.sub.id).map((d) => d.id)).toEqual(other.ids);
    // Those four are in flight: a second claim takes nothing more of that subscription.
    const second = await claimDueDeliveries(db, { limit: 100 });
    expect(of(second, busy.sub.id)).toEqual([]);
    // One recorded frees one place, for the next oldest.
    await succeed(of(first, busy.sub.id)[0]!);
    const third = await claimDueDeliveries(db, { limit: 100 });
    expect(of(third, busy.sub.id).map((d) => d.id)).toEqual([busy.ids[MAX_IN_FLIGHT_PER_SUBSCRIPTION]]);
  });

  it("claiming one named delivery (the Inngest runner) obeys the same cap, and says when to look again", async () => {
    const { sub, ids } = await subscriptionWith(MAX_IN_FLIGHT_PER_SUBSCRIPTION + 1);
    const db = await api.db();
    const claimed: ClaimedDelivery[] = [];
    for (const id of ids.slice(0, MAX_IN_FLIGHT_PER_SUBSCRIPTION)) {
      const c = await claimDelivery(db, id);
      expect(c.state, id).toBe("claimed");
      if (c.state === "claimed") claimed.push(c.delivery);
    }
    const last = ids.at(-1)!;
    const held = await claimDelivery(db, last);
    expect(held.state).toBe("wait");
    const [soonest] = await db
      .select({ lockedUntil: webhookDeliveries.lockedUntil })
      .from(webhookDeliveries)
      .where(inArray(webhookDeliveries.id, ids.slice(0, MAX_IN_FLIGHT_PER_SUBSCRIPTION)))
      .orderBy(webhookDeliveries.lockedUntil)
      .limit(1);
    // When the soonest lease ends, if its worker has not renewed it by then.
    expect(held.state === "wait" && held.until!.getTime()).toBeGreaterThanOrEqual(soonest!.lockedUntil!.getTime());
    await succeed(claimed[0]!);
    expect((await claimDelivery(db, last)).state).toBe("claimed");
    await db.update(webhookSubscriptions).set({ status: "disabled" }).where(eq(webhookSubscriptions.id, sub.id));
  });
});

describe("claim leases (issue 9: a killed worker's claims are free again within seconds)", () => {
  it("a claim holds for CLAIM_LEASE_S; the worker's renewals extend it; a renewal after the record puts no hold back", async () => {
    const { ids } = await subscriptionWith(1);
    const db = await api.db();
    const lockedUntil = async () =>
      (await db.select({ at: webhookDeliveries.lockedUntil }).from(webhookDeliveries).where(eq(webhookDeliveries.id, ids[0]!)))[0]!.at;
    const claimedAt = Date.now();
    const c = await claimDelivery(db, ids[0]!);
    expect(c.state).toBe("claimed");
    const first = (await lockedUntil())!;
    expect(first.getTime() - claimedAt).toBeGreaterThan((CLAIM_LEASE_S - 1) * 1000);
    expect(first.getTime() - claimedAt).toBeLessThan((CLAIM_LEASE_S + 1) * 1000);

    const lease = claimLease(async () => db, { leaseS: 60 });
    lease.hold(ids[0]!);
    await lease.renew();
    expect((await lockedUntil())!.getTime()).toBeGreaterThan(first.getTime() + 30_000);
    if (c.state === "claimed") await succeed(c.delivery);
    await lease.renew(); // late: the attempt is already recorded
    expect(await lockedUntil()).toBeNull();
    lease.stop();
  });

  it("a delivery whose lease lapsed unrenewed is claimed again", async () => {
    const { ids } = await subscriptionWith(1);
    const db = await api.db();
    expect((await claimDelivery(db, ids[0]!, { leaseS: 0.2 })).state).toBe("claimed");
    expect((await claimDelivery(db, ids[0]!)).state).toBe("wait");
    // As after a kill: nobody renews, and the lease runs out.
    const until = Date.now() + 5000;
    let again = await claimDelivery(db, ids[0]!);
    while (again.state === "wait" && Date.now() < until) {
      await new Promise((r) => setTimeout(r, Math.max(0, again.state === "wait" ? again.until!.getTime() - Date.now() : 0)));
      again = await claimDelivery(db, ids[0]!);
    }
    expect(again.state).toBe("claimed");
  });

  /** Makes the delivery's claim one made 6 s ago that ran out 1 s ago, as a killed worker's does CLAIM_LEASE_S after its last renewal. */
  async function lapse(deliveryId: string) {
    const db = await api.db();
    await db
      .update(webhookDeliveries)
      .set({ updatedAt: sql`now() - interval '6 seconds'`, lockedUntil: sql`now() - interval '1 second'` })
      .where(eq(webhookDeliveries.id, deliveryId));
  }
  const attemptsOf = async (deliveryId: string) =>
    (await api.db()).select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, deliveryId)).orderBy(asc(webhookAttempts.attempt));

  it("the attempt a lapsed claim cut short is in the log, as interrupted, before the delivery is attempted again (both runners' claims)", async () => {
    const { ids } = await subscriptionWith(2);
    const db = await api.db();
    const [one, named] = ids as [string, string];
    expect((await claimDueDeliveries(db, { limit: 10 })).map((d) => d.id).sort()).toEqual([...ids].sort());
    // The local runner's batch claim, then the Inngest runner's claim of one named delivery.
    await lapse(one);
    const again = await claimDueDeliveries(db, { limit: 10 });
    expect(again.map((d) => [d.id, d.attemptCount])).toEqual([[one, 1]]);
    await lapse(named);
    const c = await claimDelivery(db, named);
    expect(c.state === "claimed" && c.delivery.attemptCount).toBe(1);

    for (const id of ids) {
      const [cut, ...rest] = await attemptsOf(id);
      expect(rest).toEqual([]);
      expect(cut).toMatchObject({ attempt: 1, outcome: "not_sent", error: INTERRUPTED, responseStatus: null, requestBody: "", requestHeaders: {} });
      // From the lapsed claim (6 s ago) to the end of its lease (1 s ago).
      expect(Date.now() - cut!.startedAt.getTime()).toBeGreaterThanOrEqual(5_000);
      expect(Date.now() - cut!.startedAt.getTime()).toBeLessThan(30_000);
      expect(cut!.durationMs).toBeGreaterThanOrEqual(4_500);
      expect(cut!.durationMs).toBeLessThanOrEqual(5_500);
    }

    // The attempt that follows is the second, and the delivery counts both.
    await succeed(again[0]!);
    expect((await attemptsOf(one)).map((a) => [a.attempt, a.outcome, a.responseStatus])).toEqual([
      [1, "not_sent", null],
      [2, "response", 204],
    ]);
    const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, one));
    expect(row).toMatchObject({ status: "succeeded", attemptCount: 2, lockedUntil: null });
  });

  it("a lapsed claim of a delivery that now waits behind its failing subscription's probe is logged from its own claim time, when the Inngest runner's claim passes it by", async () => {
    const { sub, ids } = await subscriptionWith(2);
    const db = await api.db();
    const [probe, behind] = ids as [string, string];
    // Both were out while the subscription was healthy; the second's run died (its claim lapsed),
    // and meanwhile the subscription began failing: the first is its probe.
    expect((await claimDueDeliveries(db, { limit: 10 })).map((d) => d.id).sort()).toEqual([...ids].sort());
    await lapse(behind);
    await db.update(webhookDeliveries).set({ lockedUntil: null }).where(eq(webhookDeliveries.id, probe));
    await db.update(webhookSubscriptions).set({ consecutiveFailures: 1, failingSince: sql`now()` }).where(eq(webhookSubscriptions.id, sub.id));

    // Its hand-out's run finds it behind the probe: it waits, its interrupted attempt logged now.
    expect(await claimDelivery(db, behind)).toEqual({ state: "wait", until: null });
    const [cut, ...rest] = await attemptsOf(behind);
    expect(rest).toEqual([]);
    expect(cut).toMatchObject({ attempt: 1, outcome: "not_sent", error: INTERRUPTED });
    expect(Date.now() - cut!.startedAt.getTime()).toBeGreaterThanOrEqual(5_000);
    expect(cut!.durationMs).toBeGreaterThanOrEqual(4_500);
    expect(cut!.durationMs).toBeLessThanOrEqual(5_500);
    const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, behind));
    expect(row).toMatchObject({ status: "pending", attemptCount: 1, lockedUntil: null });

    // The subscription recovers: the claim that takes it logs nothing more, and its attempt is the second.
    await db.update(webhookSubscriptions).set({ consecutiveFailures: 0, failingSince: null }).where(eq(webhookSubscriptions.id, sub.id));
    await db.update(webhookDeliveries).set({ status: "succeeded" }).where(eq(webhookDeliveries.id, probe));
    const again = await claimDelivery(db, behind);
    expect(again.state === "claimed" && again.delivery.attemptCount).toBe(1);
    expect(await attemptsOf(behind)).toHaveLength(1);
  });

  it("a delivery whose attempts run out by interruptions fails as attempts_exhausted and is not sent again (a send that kills its worker every time)", async () => {
    const { ids } = await subscriptionWith(1);
    const db = await api.db();
    await claimDueDeliveries(db, { limit: 10 });
    // Queued again by hand at attempt 5, so its 20 are counted from there: 19 used.
    await db.update(webhookDeliveries).set({ attemptCount: 5 + MAX_ATTEMPTS - 1, requeuedAtAttempt: 5 }).where(eq(webhookDeliveries.id, ids[0]!));
    await lapse(ids[0]!);
    expect(await claimDueDeliveries(db, { limit: 10 })).toEqual([]);
    const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, ids[0]!));
    expect(row).toMatchObject({ status: "failed", failureReason: "attempts_exhausted", attemptCount: 5 + MAX_ATTEMPTS, lockedUntil: null });
    expect((await attemptsOf(ids[0]!)).map((a) => [a.attempt, a.error])).toEqual([[5 + MAX_ATTEMPTS, INTERRUPTED]]);
    // One attempt short of the end, it is sent again.
    const next = await subscriptionWith(1);
    await claimDueDeliveries(db, { limit: 10 });
    await db.update(webhookDeliveries).set({ attemptCount: MAX_ATTEMPTS - 2 }).where(eq(webhookDeliveries.id, next.ids[0]!));
    await lapse(next.ids[0]!);
    expect((await claimDueDeliveries(db, { limit: 10 })).map((d) => [d.id, d.attemptCount])).toEqual([[next.ids[0], MAX_ATTEMPTS - 1]]);
  });

  it("a worker taking back what it still attempts itself (its own lease ran out while it stalled) logs no interruption", async () => {
    const { ids } = await subscriptionWith(1);
    const db = await api.db();
    await claimDueDeliveries(db, { limit: 10 });
    await lapse(ids[0]!);
    const again = await claimDueDeliveries(db, { limit: 10, stillHeld: (id) => id === ids[0] });
    expect(again.map((d) => [d.id, d.attemptCount])).toEqual([[ids[0], 0]]);
    expect(await attemptsOf(ids[0]!)).toEqual([]);
  });

  it("an interrupted attempt does not count towards the subscription's failure streak", async () => {
    const { sub, ids } = await subscriptionWith(1);
    const db = await api.db();
    await claimDueDeliveries(db, { limit: 10 });
    await lapse(ids[0]!);
    expect((await claimDueDeliveries(db, { limit: 10 })).map((d) => d.attemptCount)).toEqual([1]);
    const [s] = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, sub.id));
    expect(s).toMatchObject({ consecutiveFailures: 0, status: "active" });
  });

  it("a worker paused past its lease that records its timeout after the worker that took over was answered 2xx: logged, but the healthy endpoint's streak stays 0", async () => {
    const { sub, ids } = await subscriptionWith(1);
    const db = await api.db();
    const [paused] = await claimDueDeliveries(db, { limit: 10 });
    // The first worker stalls past its lease (SIGSTOP, a VM pause); another takes the delivery and is answered.
    await lapse(ids[0]!);
    const [takenOver] = await claimDueDeliveries(db, { limit: 10 });
    expect(takenOver).toMatchObject({ id: ids[0], attemptCount: 1 });
    await succeed(takenOver!);
    // The paused worker wakes and records what it saw: its request timed out.
    const stale = await recordAttempt(db, {
      deliveryId: paused!.id,
      subscriptionId: paused!.subscriptionId,
      startedAt: new Date(Date.now() - 10_000),
      requestHeaders: {},
      requestBody: "{}",
      result: { outcome: "not_sent", error: "timeout", detail: "no answer within 10 s", durationMs: 10_000 },
      probe: paused!.probe,
    });
    expect(stale).toMatchObject({ status: "succeeded", subscriptionDisabled: false });
    expect((await attemptsOf(ids[0]!)).map((a) => [a.attempt, a.outcome, a.error ?? a.responseStatus])).toEqual([
      [1, "not_sent", INTERRUPTED],
      [2, "response", 204],
      [3, "not_sent", "timeout"],
    ]);
    const [s] = await db.select().from(webhookSubscriptions).where(eq(webhookSubscriptions.id, sub.id));
    expect(s).toMatchObject({ consecutiveFailures: 0, failingSince: null, status: "active" });
    const [d] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, ids[0]!));
    expect(d).toMatchObject({ status: "succeeded", attemptCount: 3, lockedUntil: null });
  });

  it("a claim that was not lapsed (recorded, or never claimed) logs nothing; a count that moved since the claim read it logs nothing", async () => {
    const { ids } = await subscriptionWith(1);
    const db = await api.db();
    const [first] = await claimDueDeliveries(db, { limit: 10 });
    expect(first!.attemptCount).toBe(0);
    expect(await attemptsOf(ids[0]!)).toEqual([]);
    // The slow worker recorded after all, between the claim's read and the interrupted record.
    await db.update(webhookDeliveries).set({ attemptCount: 1 }).where(eq(webhookDeliveries.id, ids[0]!));
    const recorded = await recordInterrupted(db, [{ deliveryId: ids[0]!, attemptCount: 0, claimedAt: new Date(), lapsedAt: new Date() }]);
    expect(recorded.size).toBe(0);
    expect(await attemptsOf(ids[0]!)).toEqual([]);
  });
});

describe("a delivery queued again by hand (redeliver, re-enable)", () => {
  /** Records a 500 for the delivery, as a runner does; the delivery's status after it. */
  async function fail(deliveryId: string, subscriptionId: string) {
    return (await answered500(deliveryId, subscriptionId))!.status;
  }

  it("gets the whole retry schedule again: a failure after it is retried, though the delivery had used all its attempts", async () => {
    const { sub, ids } = await subscriptionWith(1);
    const db = await api.db();
    // Its 20 attempts used: the last failure was final.
    await db.update(webhookDeliveries).set({ attemptCount: MAX_ATTEMPTS - 1 }).where(eq(webhookDeliveries.id, ids[0]!));
    expect(await fail(ids[0]!, sub.id)).toBe("failed");
    const reason = async () => (await db.select({ r: webhookDeliveries.failureReason }).from(webhookDeliveries).where(eq(webhookDeliveries.id, ids[0]!)))[0]!.r;
    expect(await reason()).toBe("attempts_exhausted");
    await requeueDeliveries(db, eq(webhookDeliveries.id, ids[0]!));
    expect(await reason()).toBeNull();
    // Sent again and failing again, it waits for its next retry instead of failing at once.
    expect(await fail(ids[0]!, sub.id)).toBe("pending");
    const [d] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, ids[0]!));
    expect(d).toMatchObject({ status: "pending", attemptCount: MAX_ATTEMPTS + 1, requeuedAtAttempt: MAX_ATTEMPTS });
    // The schedule's first step (10 s, ±20 %), not its last.
    const waitS = (d!.nextAttemptAt.getTime() - Date.now()) / 1000;
    expect(waitS).toBeGreaterThan(5);
    expect(waitS).toBeLessThan(13);
    // And it fails for good after as many attempts as a new delivery has.
    await db.update(webhookDeliveries).set({ attemptCount: 2 * MAX_ATTEMPTS - 1 }).where(eq(webhookDeliveries.id, ids[0]!));
    expect(await fail(ids[0]!, sub.id)).toBe("failed");
  });
});

describe("a delivery that fails while its attempt is out stays in flight until the attempt records", () => {
  /** A failing subscription (one failure counted) with a pending delivery of each of two athletes' events, the first athlete's oldest. */
  async function failingWithTwoAthletes() {
    const db = await api.db();
    const clientId = await rows.app();
    const sub = await rows.subscribe(clientId, "http://127.0.0.1:9/hook", ["activity.created"]);
    const athletes = [await api.person(), await api.person()];
    const grants: string[] = [];
    for (const a of athletes) {
      grants.push(await rows.grant(clientId, a.id, ["activities.read"]));
      const ctx = { db, actor: { kind: "session" as const, userId: a.id } };
      await inWriteCtx(ctx, (ctx) => createActivity({ ctx, athleteId: a.id, input: { name: "Run", sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 } }));
      while ((await fanOutEvents(db)).events > 0);
    }
    const ids = (await db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.subscriptionId, sub.id)).orderBy(webhookDeliveries.eventSeq)).map(
      (r) => r.id,
    );
    expect(ids).toHaveLength(2);
    await db.update(webhookSubscriptions).set({ consecutiveFailures: 1, failingSince: sql`now()` }).where(eq(webhookSubscriptions.id, sub.id));
    return { db, sub, athletes, grants, ids };
  }

  it("a failing subscription's probe withdrawn mid-attempt (the athlete disconnected) still holds the one probe's place: the next waits for its record", async () => {
    const { db, sub, athletes, grants, ids } = await failingWithTwoAthletes();
    const [probe] = await claimDueDeliveries(db, { limit: 10 });
    expect(probe).toMatchObject({ id: ids[0], probe: true });
    const lease = claimLease(async () => db, { leaseS: 60 });
    lease.hold(ids[0]!);
    // The first athlete disconnects the app while the probe is out.
    await inTransaction(db, (tx) => endGrant(tx, grants[0]!, athletes[0]!.id));
    const [withdrawn] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, ids[0]!));
    expect(withdrawn).toMatchObject({ status: "failed", failureReason: "athlete_disconnected" });
    // Its worker's renewals keep the hold of the attempt still out.
    await lease.renew();
    const [renewed] = await db.select({ at: webhookDeliveries.lockedUntil }).from(webhookDeliveries).where(eq(webhookDeliveries.id, ids[0]!));
    expect(renewed!.at!.getTime()).toBeGreaterThan(Date.now() + 30_000);
    // One probe at a time: the second athlete's delivery is not claimed while the first is out.
    expect(of(await claimDueDeliveries(db, { limit: 10 }), sub.id)).toEqual([]);
    expect((await claimDelivery(db, ids[1]!)).state).not.toBe("claimed");
    // Requeued by hand meanwhile (the app still reaches the second athlete only), nothing changes for the first.
    await requeueDeliveries(db, eq(webhookDeliveries.id, ids[0]!));
    expect(of(await claimDueDeliveries(db, { limit: 10 }), sub.id)).toEqual([]);
    // The attempt records: it stays withdrawn, its lease ends, and the next probe goes.
    expect(await answered500(ids[0]!, sub.id)).toMatchObject({ status: "failed" });
    lease.stop();
    const [settled] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, ids[0]!));
    expect(settled).toMatchObject({ status: "failed", failureReason: "athlete_disconnected", lockedUntil: null, attemptCount: 1 });
    expect(of(await claimDueDeliveries(db, { limit: 10 }), sub.id).map((d) => ({ id: d.id, probe: d.probe }))).toEqual([{ id: ids[1], probe: true }]);
  });

  it("deliveries failed by a disable mid-attempt keep their holds: re-enabled and redelivered, one still out is not sent twice at once", async () => {
    const { db, sub, ids } = await failingWithTwoAthletes();
    await db.update(webhookSubscriptions).set({ consecutiveFailures: 0, failingSince: null }).where(eq(webhookSubscriptions.id, sub.id));
    const claimed = of(await claimDueDeliveries(db, { limit: 10 }), sub.id);
    expect(claimed.map((d) => d.id)).toEqual(ids);
    // The first attempt's failure is the 20th in a row: the subscription is disabled and the other delivery, still out, fails with it.
    await db.update(webhookSubscriptions).set({ consecutiveFailures: 19, failingSince: sql`now()` }).where(eq(webhookSubscriptions.id, sub.id));
    expect(await answered500(ids[0]!, sub.id)).toMatchObject({ status: "failed", subscriptionDisabled: true });
    const [other] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, ids[1]!));
    expect(other).toMatchObject({ status: "failed", failureReason: "subscription_disabled" });
    expect(other!.lockedUntil!.getTime()).toBeGreaterThan(Date.now());
    // Re-enabled and both redelivered while the second attempt is still out: only the first goes.
    await db.update(webhookSubscriptions).set({ status: "active", consecutiveFailures: 0, failingSince: null, disabledAt: null }).where(eq(webhookSubscriptions.id, sub.id));
    await requeueDeliveries(db, inArray(webhookDeliveries.id, ids));
    expect(of(await claimDueDeliveries(db, { limit: 10 }), sub.id).map((d) => d.id)).toEqual([ids[0]]);
  });
});

// Two claims at once need two connections: PostgreSQL's pool has them, the embedded database has
// one and runs them in turn.
describe.runIf(process.env.TEST_DATABASE_URL)("two processes claiming at once", () => {
  it("together take no more than MAX_IN_FLIGHT_PER_SUBSCRIPTION of one subscription: a claim counts the claims committed before it", async () => {
    const { sub, ids } = await subscriptionWith(MAX_IN_FLIGHT_PER_SUBSCRIPTION * 2);
    const db = await api.db();
    let theirs: Promise<ClaimedDelivery[]> | undefined;
    let settled = false;
    // One process's claim, its transaction held open; the other's claim starts meanwhile, on
    // another connection, and the first commits once that one waits (or has finished).
    await db.transaction(async (tx) => {
      const mine = await claimDueDeliveries(tx as unknown as typeof db, { limit: 100 });
      expect(of(mine, sub.id).map((d) => d.id)).toEqual(ids.slice(0, MAX_IN_FLIGHT_PER_SUBSCRIPTION));
      theirs = claimDueDeliveries(db, { limit: 100 }).finally(() => (settled = true));
      await untilWaitingOnLock(db, () => settled, "the second claim");
    });
    expect(of(await theirs!, sub.id)).toEqual([]);
    const inFlight = await db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(sql`${webhookDeliveries.subscriptionId} = ${sub.id} and ${webhookDeliveries.lockedUntil} > now()`);
    expect(inFlight).toHaveLength(MAX_IN_FLIGHT_PER_SUBSCRIPTION);
  });
});

// Another session's lock on the subscription's row needs a second connection: PostgreSQL's pool
// has one, the embedded database has a single connection, on which no other session can hold it.
describe.runIf(process.env.TEST_DATABASE_URL)("a failing subscription's probe whose row another session holds (fan-out's FOR SHARE)", () => {
  it("is not left waiting behind itself: its claim looks again in a second; a delivery behind it still waits for the recovery", async () => {
    const { sub, ids } = await subscriptionWith(2);
    const db = await api.db();
    await db.update(webhookSubscriptions).set({ consecutiveFailures: 3, failingSince: new Date() }).where(eq(webhookSubscriptions.id, sub.id));
    const [before] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, ids[0]!));
    let probe: Awaited<ReturnType<typeof claimDelivery>> | undefined;
    let behind: Awaited<ReturnType<typeof claimDelivery>> | undefined;
    const t0 = Date.now();
    // As fan-out's save does for every live subscription an event goes to: the claim (on
    // another connection of the pool) skips the locked row.
    await db.transaction(async (tx) => {
      await tx.execute(sql`select ${webhookSubscriptions.id} from ${webhookSubscriptions} where ${webhookSubscriptions.id} = ${sub.id} for share`);
      probe = await claimDelivery(db, ids[0]!);
      behind = await claimDelivery(db, ids[1]!);
    });
    expect(probe!.state).toBe("wait");
    const until = (probe as { until: Date | null }).until;
    expect(until).not.toBeNull();
    expect(until!.getTime()).toBeGreaterThan(t0);
    expect(until!.getTime()).toBeLessThan(Date.now() + 2_000);
    expect(behind).toEqual({ state: "wait", until: null });
    const [after] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, ids[0]!));
    expect(after).toMatchObject({ status: "pending", attemptCount: 0, updatedAt: before!.updatedAt });
    // Once the row is free, the look again claims it as the probe.
    const again = await claimDelivery(db, ids[0]!);
    expect(again).toMatchObject({ state: "claimed", delivery: { id: ids[0], probe: true } });
  });
});
