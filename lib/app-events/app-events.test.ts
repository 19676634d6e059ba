import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { sha256Hex } from "../crypto/random";
import { events, oauthClients, oauthGrants, oauthTokenFamilies, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { newId } from "../ids";
import { issueAppAccessToken } from "../oauth/access-token";
import { setupApi } from "../testing/fixtures";
import { eventsVisible } from "../testing/events-visible";
import { AppEventList } from "./schemas";

const api = setupApi();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function app(events: string[] | null) {
  const db = await api.db();
  const clientId = `ev-${randomBytes(5).toString("hex")}`;
  await db.insert(oauthClients).values({
    clientId,
    name: "Events App",
    kind: "confidential",
    secretHash: sha256Hex("s"),
    redirectUris: ["https://ev.example.com/cb"],
  });
  if (events) {
    await db.insert(webhookSubscriptions).values({ id: `whs_${randomBytes(8).toString("hex")}`, clientId, url: "https://ev.example.com/hook", events, secretSealed: "v1.a.b.c" });
  }
  const token = (await issueAppAccessToken(db, { clientId, secretHash: sha256Hex("s") })).token;
  return { clientId, token };
}

async function grant(clientId: string, userId: string, scopes: string[], over: Partial<typeof oauthGrants.$inferInsert> = {}) {
  // Granted 40 days ago with these scopes, unchanged since (updated_at as created_at).
  const at = new Date(Date.now() - 40 * DAY);
  const id = newId("grt");
  await (await api.db()).insert(oauthGrants).values({ id, clientId, userId, scopes, createdAt: at, updatedAt: at, ...over });
  return id;
}

async function event(type: string, athleteId: string, occurredAt: Date, over: Partial<typeof events.$inferInsert> = {}) {
  const [row] = await (await api.db())
    .insert(events)
    .values({ id: newId("evt"), type, athleteId, objectId: newId("act"), objectType: type.split(".")[0]!, occurredAt, ...over })
    .returning();
  return row!.id;
}

/** A delivery of event `eventId` to the app's (first) subscription, sent: what fan-out and the runner leave. */
async function deliver(clientId: string, eventId: string, over: Partial<typeof webhookDeliveries.$inferInsert> = {}) {
  const db = await api.db();
  const [sub] = await db.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions).where(eq(webhookSubscriptions.clientId, clientId));
  const [e] = await db.select({ seq: events.seq }).from(events).where(eq(events.id, eventId));
  await db.insert(webhookDeliveries).values({ id: newId("whd"), subscriptionId: sub!.id, eventId, eventSeq: e!.seq, status: "succeeded", attemptCount: 1, ...over });
}

async function list(token: string, query = "") {
  await eventsVisible(await api.db());
  const res = await api.call(token, "GET", `/v1/app/events${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return AppEventList.parse(await res.json());
}

describe("GET /v1/app/events", () => {
  it("lists, oldest first, the last 30 days' events the app was or would have been sent: the kinds it subscribes to now, each athlete's grant as of the event", async () => {
    const a = await app(["activity.created", "metric.created", "athlete.deauthorized"]);
    const b = await app(["activity.created", "athlete.deauthorized"]);
    const [reads, both, stranger, gone, late] = await Promise.all([1, 2, 3, 4, 5].map(() => api.person()));
    await grant(a.clientId, reads!.id, ["activities.read"]);
    await grant(a.clientId, both!.id, ["activities.read", "metrics.read"]);
    await grant(a.clientId, gone!.id, ["activities.read"], { revokedAt: new Date(Date.now() - HOUR) });
    await grant(a.clientId, gone!.id, ["activities.read"], { createdAt: new Date(Date.now() - HOUR / 4) });
    await grant(a.clientId, late!.id, ["activities.read"], { createdAt: new Date(Date.now() - 2 * HOUR) });
    await grant(b.clientId, stranger!.id, ["activities.read"]);

    const now = Date.now();
    const at = (msAgo: number) => new Date(now - msAgo);
    const expected: string[] = [];
    await event("activity.created", reads!.id, at(31 * DAY)); // older than 30 days
    expected.push(await event("activity.created", reads!.id, at(29 * DAY)));
    await event("metric.created", reads!.id, at(28 * DAY)); // no metrics.read
    expected.push(await event("metric.created", both!.id, at(27 * DAY)));
    await event("activity.updated", both!.id, at(26 * DAY)); // kind not subscribed to
    await event("activity.created", stranger!.id, at(25 * DAY)); // not authorized to this app
    // Disconnected an hour ago, and connected again since: what the app was sent before the
    // disconnect stays listed (once), what happened while disconnected never is.
    expected.push(await event("activity.created", gone!.id, at(24 * DAY)));
    await deliver(a.clientId, expected.at(-1)!);
    expected.push(await event("athlete.deauthorized", gone!.id, at(HOUR), { clientId: a.clientId, objectType: "athlete" }));
    await event("activity.created", gone!.id, at(HOUR / 2)); // while disconnected
    await event("athlete.deauthorized", stranger!.id, at(HOUR), { clientId: b.clientId, objectType: "athlete" }); // another app's
    await event("activity.created", late!.id, at(3 * HOUR)); // before the authorization
    expected.push(await event("activity.created", late!.id, at(HOUR)));
    await event("webhook.test", "", at(HOUR), { clientId: a.clientId, objectType: "webhook_subscription" });

    const all = await list(a.token);
    // Ordered by outbox position, which is the order they were appended here.
    expect(all.data.map((e) => e.id)).toEqual(expected);
    expect(all.next_cursor).toBeNull();
    expect(all.data[0]).toEqual({
      id: expected[0],
      type: "activity.created",
      athlete_id: reads!.id,
      object_id: expect.stringMatching(/^act_/),
      object_type: "activity",
      occurred_at: at(29 * DAY).toISOString(),
    });

    // Page by page, and on from an event id.
    const p1 = await list(a.token, "?limit=3");
    expect(p1.data.map((e) => e.id)).toEqual(expected.slice(0, 3));
    const p2 = await list(a.token, `?limit=3&after=${p1.next_cursor}`);
    expect(p2.data.map((e) => e.id)).toEqual(expected.slice(3));
    expect(p2.next_cursor).toBeNull();
    // By the name every other list pages with, too (a client paging all lists alike got page 1 forever).
    expect((await list(a.token, `?limit=3&cursor=${p1.next_cursor}`)).data.map((e) => e.id)).toEqual(expected.slice(3));
    expect((await list(a.token, `?cursor=${expected[1]}`)).data.map((e) => e.id)).toEqual(expected.slice(2));
    const twoNames = await api.call(a.token, "GET", `/v1/app/events?after=${expected[1]}&cursor=${p1.next_cursor}`);
    expect(twoNames.status).toBe(400);
    expect(await twoNames.json()).toMatchObject({ code: "invalid_parameter_combination", errors: [{ field: "cursor", code: "invalid_parameter_combination" }] });
    const junk = await api.call(a.token, "GET", "/v1/app/events?cursor=x");
    expect(junk.status).toBe(400);
    expect(await junk.json()).toMatchObject({ code: "invalid_cursor", errors: [{ field: "cursor", code: "invalid_cursor" }] });
    // Longer than any cursor the API issues: invalid_cursor, as every list's cursor (Cursor in lib/http/schemas.ts).
    for (const name of ["cursor", "after"]) {
      const long = await api.call(a.token, "GET", `/v1/app/events?${name}=${"a".repeat(501)}`);
      expect(long.status).toBe(400);
      expect(await long.json()).toMatchObject({ code: "invalid_cursor", errors: [{ field: name, code: "invalid_cursor" }] });
      // Empty, as a last page's null written out as "": refused, not page 1 again (a client would page forever).
      const empty = await api.call(a.token, "GET", `/v1/app/events?${name}=`);
      expect(empty.status, name).toBe(400);
      expect(await empty.json()).toMatchObject({ code: "invalid_cursor", errors: [{ field: name, code: "invalid_cursor", detail: expect.stringContaining("empty") }] });
    }
    expect((await list(a.token, `?after=${expected[1]}`)).data.map((e) => e.id)).toEqual(expected.slice(2));
    expect((await list(a.token, `?after=${expected.at(-1)}`)).data).toEqual([]);
    // A cursor of the outbox position alone (as issued before events carried their transaction) still goes on from its event.
    const [second] = await (await api.db()).select({ seq: events.seq }).from(events).where(eq(events.id, expected[1]!));
    const legacy = Buffer.from(JSON.stringify([String(second!.seq)])).toString("base64url");
    expect((await list(a.token, `?after=${legacy}`)).data.map((e) => e.id)).toEqual(expected.slice(2));

    // The other app sees only what concerns it, and another app's event id is no place to go on
    // from for it: refused as an id that does not exist, which says nothing about whether it does.
    expect((await list(b.token)).data.map((e) => e.athlete_id)).toEqual([stranger!.id, stranger!.id]);
    const foreign = await api.call(b.token, "GET", `/v1/app/events?after=${expected[1]}`);
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toMatchObject({ code: "invalid_cursor", detail: `No event ${expected[1]}.` });
    // Nor is its place in the outbox, written as a cursor of the old form.
    const foreignPlace = await api.call(b.token, "GET", `/v1/app/events?after=${legacy}`);
    expect(foreignPlace.status).toBe(400);
    expect(await foreignPlace.json()).toMatchObject({ code: "invalid_cursor", errors: [{ field: "after", code: "invalid_cursor" }] });

    // The id of a test event the app was sent (the last id a receiver saw, after "Send test
    // event") is a place to go on from too; another app's test event is not.
    const test = await event("webhook.test", "", new Date(), { clientId: a.clientId, objectType: "webhook_subscription" });
    const last = await event("activity.created", reads!.id, new Date());
    expect((await list(a.token, `?after=${test}`)).data.map((e) => e.id)).toEqual([last]);
    expect((await list(a.token)).data.map((e) => e.id)).not.toContain(test);
    expect((await api.call(b.token, "GET", `/v1/app/events?after=${test}`)).status).toBe(400);
  });

  it("judges a scope as fan-out does: one added since an event does not reach back to it", async () => {
    const a = await app(["activity.created", "metric.created"]);
    const athlete = await api.person();
    // Granted metrics.read 40 days ago; activities.read added 5 hours ago (the grant widened in place).
    const grantId = await grant(a.clientId, athlete.id, ["metrics.read", "activities.read"], { updatedAt: new Date(Date.now() - 5 * HOUR) });
    // What the first authorization's code exchange left: a token family with the scopes of then.
    await (await api.db()).insert(oauthTokenFamilies).values({ id: newId("fam"), grantId, scopes: ["metrics.read"], createdAt: new Date(Date.now() - 40 * DAY) });
    const metric = await event("metric.created", athlete.id, new Date(Date.now() - 10 * HOUR));
    await event("activity.created", athlete.id, new Date(Date.now() - 10 * HOUR)); // before activities.read was granted
    const after = await event("activity.created", athlete.id, new Date(Date.now() - HOUR));
    expect((await list(a.token)).data.map((e) => e.id)).toEqual([metric, after]);
  });

  it("keeps listing what the app was sent after a subscription narrows its kinds; a kind it no longer covers is not listed otherwise", async () => {
    const a = await app(["activity.created", "activity.updated"]);
    const athlete = await api.person();
    await grant(a.clientId, athlete.id, ["activities.read"]);
    const db = await api.db();
    const [sub] = await db.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions).where(eq(webhookSubscriptions.clientId, a.clientId));
    const sent = await event("activity.created", athlete.id, new Date(Date.now() - 3 * HOUR));
    await deliver(a.clientId, sent);
    const updated = await event("activity.updated", athlete.id, new Date(Date.now() - 2 * HOUR));
    const test = await event("webhook.test", "", new Date(Date.now() - 2 * HOUR), { clientId: a.clientId, objectType: "webhook_subscription" });
    await deliver(a.clientId, test);
    expect((await list(a.token)).data.map((e) => e.id)).toEqual([sent, updated]);
    // The app narrows the subscription to updates: the creation it was sent stays listed.
    await db.update(webhookSubscriptions).set({ events: ["activity.updated"] }).where(eq(webhookSubscriptions.id, sub!.id));
    await event("activity.created", athlete.id, new Date(Date.now() - HOUR)); // neither sent nor covered now
    expect((await list(a.token)).data.map((e) => e.id)).toEqual([sent, updated]);
  });

  it("shows nothing new of an athlete who has disconnected: a kind taken up after the disconnect lists none of their events, and a delivery withdrawn unsent is not one sent", async () => {
    const a = await app(["activity.created"]);
    const athlete = await api.person();
    // Authorized 40 days ago with both scopes, disconnected an hour ago.
    await grant(a.clientId, athlete.id, ["activities.read", "metrics.read"], { revokedAt: new Date(Date.now() - HOUR) });
    const db = await api.db();
    const sent = await event("activity.created", athlete.id, new Date(Date.now() - 5 * HOUR));
    await deliver(a.clientId, sent);
    // Covered then, but never sent (fan-out had not reached it when the athlete disconnected).
    await event("activity.created", athlete.id, new Date(Date.now() - 2 * HOUR));
    // Queued, then withdrawn by the disconnect before its first attempt: never sent either.
    const withdrawn = await event("activity.created", athlete.id, new Date(Date.now() - 90 * 60_000));
    await deliver(a.clientId, withdrawn, { status: "failed", failureReason: "athlete_disconnected", attemptCount: 0 });
    // Attempted (the endpoint failed), then withdrawn: the app was sent it.
    const tried = await event("activity.created", athlete.id, new Date(Date.now() - 80 * 60_000));
    await deliver(a.clientId, tried, { status: "failed", failureReason: "athlete_disconnected", attemptCount: 1 });
    // Of kinds no subscription covered, so never sent.
    await event("activity.updated", athlete.id, new Date(Date.now() - 4 * HOUR));
    await event("metric.created", athlete.id, new Date(Date.now() - 3 * HOUR));
    expect((await list(a.token)).data.map((e) => e.id)).toEqual([sent, tried]);
    // After the disconnect, the app widens its subscription to every kind: still only what it was sent.
    await db.update(webhookSubscriptions).set({ events: ["activity.created", "activity.updated", "metric.created"] }).where(eq(webhookSubscriptions.clientId, a.clientId));
    expect((await list(a.token)).data.map((e) => e.id)).toEqual([sent, tried]);
    // An event it was sent is a place to go on from, though the athlete has gone; one it never was is not.
    expect((await list(a.token, `?after=${sent}`)).data.map((e) => e.id)).toEqual([tried]);
    const res = await api.call(a.token, "GET", `/v1/app/events?after=${withdrawn}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "invalid_cursor" });
  });

  it("is empty for an app with no subscriptions", async () => {
    const a = await app(null);
    const athlete = await api.person();
    await grant(a.clientId, athlete.id, ["activities.read", "metrics.read"]);
    await event("activity.created", athlete.id, new Date());
    expect(await list(a.token)).toEqual({ data: [], next_cursor: null });
  });

  it("refuses a cursor it did not issue and an unknown event id with 400 invalid_cursor", async () => {
    const a = await app(["activity.created"]);
    const forged = (parts: string[]) => Buffer.from(JSON.stringify(parts)).toString("base64url");
    for (const after of [
      "bogus",
      forged(["x"]),
      "evt_doesnotexist",
      // Numbers past what a bigint `seq` holds, in both forms: refused, not a database error.
      forged(["1", "9999999999999999999"]),
      forged(["9999999999999999999"]),
      forged(["1", "9007199254740993"]),
    ]) {
      const res = await api.call(a.token, "GET", `/v1/app/events?after=${after}`);
      expect(res.status, after).toBe(400);
      expect(await res.json()).toMatchObject({ code: "invalid_cursor", errors: [{ field: "after", code: "invalid_cursor" }] });
    }
  });

  it("refuses a personal access token with 403 client_credentials_required", async () => {
    const person = await api.person();
    const res = await api.call(await api.pat(person.id), "GET", "/v1/app/events");
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "client_credentials_required" });
  });
});

// A transaction held open while another commits needs two connections at once: PostgreSQL's
// pool has them, the embedded database has one and runs transactions in turn.
describe.runIf(process.env.TEST_DATABASE_URL)("GET /v1/app/events with transactions that commit out of order", () => {
  it("never hands out a position past an event still being written: a reconciling app misses nothing", async () => {
    const a = await app(["activity.created"]);
    const athlete = await api.person();
    await grant(a.clientId, athlete.id, ["activities.read"]);
    const first = await event("activity.created", athlete.id, new Date(Date.now() - HOUR));
    expect((await list(a.token)).data.map((e) => e.id)).toEqual([first]);

    const db = await api.db();
    let slow = "";
    let fast = "";
    let cursor = first;
    await db.transaction(async (tx) => {
      // A long write (an upload's save) appends its event first, so its place in the outbox comes first…
      const [row] = await tx
        .insert(events)
        .values({ id: newId("evt"), type: "activity.created", athleteId: athlete.id, objectId: newId("act"), objectType: "activity", occurredAt: new Date() })
        .returning();
      slow = row!.id;
      // …and a quick one commits meanwhile.
      fast = await event("activity.created", athlete.id, new Date());
      // The app reconciles now and goes on from the last event it was given.
      const res = await api.call(a.token, "GET", `/v1/app/events?after=${cursor}`);
      const seen = AppEventList.parse(await res.json()).data.map((e) => e.id);
      expect(seen).not.toContain(slow);
      cursor = seen.at(-1) ?? cursor;
    });
    const rest = await list(a.token, `?after=${cursor}`);
    expect([...(cursor === first ? [] : [cursor]), ...rest.data.map((e) => e.id)].sort()).toEqual([slow, fast].sort());
  });

  it("is not held back by a transaction left open in another database of the same server", async () => {
    // Transaction ids are the server's: an idle session in a transaction next door (this file's
    // database is its own, TEST_DATABASE_URL's is another) held every new event back until it ended.
    const a = await app(["activity.created"]);
    const athlete = await api.person();
    await grant(a.clientId, athlete.id, ["activities.read"]);
    const neighbour = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    const session = await neighbour.reserve();
    try {
      await session`begin`;
      await session`select pg_current_xact_id()`; // holds a transaction id, as any write does
      const id = await event("activity.created", athlete.id, new Date());
      const res = await api.call(a.token, "GET", "/v1/app/events");
      expect(AppEventList.parse(await res.json()).data.map((e) => e.id)).toEqual([id]);
    } finally {
      await session`rollback`;
      session.release();
      await neighbour.end();
    }
  });
});
