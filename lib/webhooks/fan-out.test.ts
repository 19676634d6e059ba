import { describe, expect, it } from "vitest";
import { createHash, randomBytes } from "node:crypto";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { createActivity } from "../activities/create-activity";
import { events, oauthGrants, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { createMetric } from "../metrics/metrics";
import { decideAuthorization } from "../oauth/authorize";
import { setupApi } from "../testing/fixtures";
import { startReceiver } from "../testing/webhook-receiver";
import { webhookRows } from "../testing/webhook-rows";
import { claimDueDeliveries } from "./claim-deliveries";
import { fanOutEvents } from "./fan-out";
import { startLocalRunner } from "./local-runner";
import { serializePayload } from "./payload";
import { inWriteCtx } from "../http/operation";

const api = setupApi();
const rows = webhookRows(api.db);

async function connectedAthlete(url: string) {
  const athlete = await api.person();
  const clientId = await rows.app();
  await rows.grant(clientId, athlete.id, ["activities.read"]);
  const sub = await rows.subscribe(clientId, url, ["activity.created"]);
  const ctx = { db: await api.db(), actor: { kind: "session" as const, userId: athlete.id } };
  const record = (i = 0) =>
    inWriteCtx(ctx, (ctx) => createActivity({ ctx, athleteId: athlete.id, input: { name: `Run ${i}`, sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 } }));
  return { athlete, clientId, sub, record };
}

describe("payload (SPEC §2.2)", () => {
  it("is the six thin fields, occurred_at in UTC with Z", () => {
    const body = serializePayload({
      id: "evt_1",
      type: "activity.created",
      athleteId: "ath_1",
      objectId: "act_1",
      objectType: "activity",
      occurredAt: new Date("2025-03-01T06:00:00.123+01:00"),
    });
    expect(body).toBe(
      '{"id":"evt_1","type":"activity.created","athlete_id":"ath_1","object_id":"act_1","object_type":"activity","occurred_at":"2025-03-01T05:00:00.123Z"}',
    );
  });
});

describe("fanOutEvents", () => {
  it("makes one delivery per matching subscription, marks the events, and takes each event once", async () => {
    const { sub, record, clientId } = await connectedAthlete("http://127.0.0.1:9/hook");
    const off = await rows.subscribe(clientId, "http://127.0.0.1:9/off", ["activity.created"], { status: "disabled" });
    await record(1);
    await record(2);
    const db = await api.db();
    let made = 0;
    for (let r = await fanOutEvents(db); r.events > 0; r = await fanOutEvents(db)) made += r.deliveries.filter((d) => d.subscriptionId === sub.id).length;
    expect(made).toBe(2);
    expect(await db.select().from(events).where(isNull(events.fannedOutAt))).toEqual([]);
    expect(await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.subscriptionId, off.id))).toEqual([]);
    expect(await fanOutEvents(db)).toEqual({ events: 0, deliveries: [] });
    // Claimed deliveries are held: a second claim does not take them again.
    const claimed = (await claimDueDeliveries(db, { limit: 100 })).filter((d) => d.subscriptionId === sub.id);
    expect(claimed).toHaveLength(2);
    expect(claimed[0]!.event).toMatchObject({ type: "activity.created" });
    expect((await claimDueDeliveries(db, { limit: 100 })).filter((d) => d.subscriptionId === sub.id)).toEqual([]);
    await db.update(webhookSubscriptions).set({ status: "disabled" }).where(eq(webhookSubscriptions.id, sub.id));
  });

  it("two runners on one database deliver every event, each once", async () => {
    const rx = await startReceiver(() => ({ status: 200, delayMs: 5 }));
    const { record } = await connectedAthlete(rx.url);
    const db = await api.db();
    const runners = [1, 2].map(() => startLocalRunner({ db, allowPrivate: true, concurrency: 4, pollMs: 100 }));
    let stopping: Promise<unknown> | undefined;
    const stopRunners = () => (stopping ??= Promise.all(runners.map((r) => r.stop())));
    try {
      const written = [];
      for (let i = 0; i < 40; i++) written.push((await record(i)).id);
      await rx.waitFor((r) => r.length >= 40, 15_000);
      // "Nothing more came" is a fact, not a pause: each runner has passed over everything due
      // with no attempt in flight, and then stopped, so no request can still be on its way.
      await Promise.all(runners.map((r) => r.idle()));
      await stopRunners();
      const got = rx.requests.map((r) => (JSON.parse(r.body) as { object_id: string }).object_id);
      expect(got.sort()).toEqual([...written].sort());
    } finally {
      await stopRunners();
      await rx.close();
    }
  });
});

describe("who receives an event, judged as of when it occurred (SPEC §6.2, issue 9)", () => {
  /** The athlete allows the app `scope` on the consent screen, as /oauth/authorize records it. */
  async function authorize(clientId: string, athleteId: string, scope: string) {
    const verifier = randomBytes(32).toString("base64url");
    const params = {
      client_id: clientId,
      redirect_uri: "https://log.example.com/cb",
      response_type: "code",
      scope,
      state: randomBytes(8).toString("hex"),
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    };
    const step = await decideAuthorization(await api.db(), params, athleteId, "allow");
    expect(step.kind === "redirect" && new URL(step.url).searchParams.has("code")).toBe(true);
  }

  async function athleteWithSubscribedApp() {
    const athlete = await api.person();
    const clientId = await rows.app();
    const sub = await rows.subscribe(clientId, "http://127.0.0.1:9/hook", ["activity.created", "metric.created"]);
    const ctx = { db: await api.db(), actor: { kind: "session" as const, userId: athlete.id } };
    const run = (name: string) =>
      inWriteCtx(ctx, (ctx) => createActivity({ ctx, athleteId: athlete.id, input: { name, sport_type: "run", start_local: "2025-03-01T07:00:00", elapsed_time_s: 600 } }));
    const weigh = () => inWriteCtx(ctx, (ctx) => createMetric({ ctx, athleteId: athlete.id, input: { type: "body_mass_kg", value: 70, measured_local: "2025-03-01T07:00:00" } }));
    return { athlete, clientId, sub, run, weigh };
  }

  async function fanOutAll() {
    const db = await api.db();
    while ((await fanOutEvents(db)).events > 0);
  }

  /** The object ids of the events that became deliveries to `subscriptionId`. */
  async function deliveredObjects(subscriptionId: string): Promise<string[]> {
    const db = await api.db();
    const rows = await db
      .select({ objectId: events.objectId })
      .from(webhookDeliveries)
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(eq(webhookDeliveries.subscriptionId, subscriptionId))
      .orderBy(events.seq);
    return rows.map((r) => r.objectId);
  }

  it("an event written before the athlete authorized the app does not reach it, even when fan-out runs after; one written after does", async () => {
    const { athlete, clientId, sub, run } = await athleteWithSubscribedApp();
    const before = await run("Before");
    await authorize(clientId, athlete.id, "activities.read");
    await fanOutAll(); // fan-out lag: it runs only now, with the grant in place
    const db = await api.db();
    const [fanned] = await db.select({ at: events.fannedOutAt }).from(events).where(eq(events.objectId, before.id));
    expect(fanned!.at).not.toBeNull(); // it was looked at, and went to no one
    expect(await deliveredObjects(sub.id)).toEqual([]);

    const after = await run("After");
    await fanOutAll();
    expect(await deliveredObjects(sub.id)).toEqual([after.id]);
  });

  it("a scope added after an event does not reach back to it; the scopes held then still do", async () => {
    const { athlete, clientId, sub, run, weigh } = await athleteWithSubscribedApp();
    await authorize(clientId, athlete.id, "activities.read");
    const ran = await run("Held scope");
    const weighed = await weigh(); // behind metrics.read, which the app does not hold yet
    await authorize(clientId, athlete.id, "activities.read metrics.read");
    const db = await api.db();
    const [grant] = await db
      .select()
      .from(oauthGrants)
      .where(and(eq(oauthGrants.clientId, clientId), eq(oauthGrants.userId, athlete.id), isNull(oauthGrants.revokedAt)));
    expect(grant!.scopes).toEqual(expect.arrayContaining(["activities.read", "metrics.read"])); // widened in place
    await fanOutAll();
    const fanned = await db.select({ at: events.fannedOutAt }).from(events).where(inArray(events.objectId, [ran.id, weighed.id]));
    expect(fanned.every((f) => f.at !== null)).toBe(true);
    expect(await deliveredObjects(sub.id)).toEqual([ran.id]);

    const later = await weigh();
    await fanOutAll();
    expect(await deliveredObjects(sub.id)).toEqual([ran.id, later.id]);
  });
});
