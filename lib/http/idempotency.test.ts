import { afterAll, describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { setupApi } from "../testing/fixtures";
import { countRows, writeCounts } from "../testing/rows";
import { handshakeThen, startReceiver } from "../testing/webhook-receiver";
import { rowsOf } from "../db/client";
import { activities, events, idempotencyKeys } from "../db/schema";
import { resetEnvForTests } from "../env";
import { pruneIdempotencyKeys } from "./idempotency";

const api = setupApi();

const RUN = { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 };

function post(token: string, key: string, body: unknown = RUN, path = "/v1/athletes/me/activities") {
  return api.call(token, "POST", path, { body, headers: { "idempotency-key": key } });
}

async function writer() {
  const p = await api.person();
  return { id: p.id, token: await api.pat(p.id, ["activities.write", "metrics.write"]) };
}

/** Makes every insert into `events` wait, so a write's transaction stays open for a while. */
async function slowEvents<T>(seconds: number, run: () => Promise<T>): Promise<T> {
  const db = await api.db();
  await db.execute(sql.raw(`create function slow_event() returns trigger language plpgsql as $$
    begin perform pg_sleep(${seconds}); return new; end $$`));
  await db.execute(sql`create trigger slow_event before insert on events for each row execute function slow_event()`);
  try {
    return await run();
  } finally {
    await db.execute(sql`drop trigger slow_event on events`);
    await db.execute(sql`drop function slow_event()`);
  }
}

describe("Idempotency-Key on POST", () => {
  it("replays the first answer for the same key and body: same id, Idempotent-Replayed, one row and one event", async () => {
    const { token } = await writer();
    const before = await writeCounts();
    const first = await post(token, "same-key-1");
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const firstText = await first.text();
    const created = JSON.parse(firstText) as { id: string };

    for (let i = 0; i < 2; i++) {
      const again = await post(token, "same-key-1");
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("content-type")).toBe("application/json");
      // The same bytes: the same members in the same order.
      expect(await again.text()).toBe(firstText);
    }
    expect(await countRows(activities, eq(activities.id, created.id))).toBe(1);
    expect(await countRows(events, eq(events.objectId, created.id))).toBe(1);
    const after = await writeCounts();
    expect(after.activities - before.activities).toBe(1);
    expect(after.events - before.events).toBe(1);
  });

  it("replays for metrics too", async () => {
    const { token } = await writer();
    const body = { type: "body_mass_kg", value: 70, measured_local: "2026-03-01T06:30:00" };
    const first = await post(token, "metric-key", body, "/v1/athletes/me/metrics");
    expect(first.status).toBe(201);
    const again = await post(token, "metric-key", body, "/v1/athletes/me/metrics");
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(await first.text());
  });

  it("refuses the same key with a different body, or on another endpoint, with 422 idempotency_key_reused", async () => {
    const { token } = await writer();
    expect((await post(token, "reused")).status).toBe(201);
    const counts = await writeCounts();
    const changed = await post(token, "reused", { ...RUN, name: "Another run" });
    expect(changed.status).toBe(422);
    expect(changed.headers.get("content-type")).toBe("application/problem+json");
    expect(await changed.json()).toMatchObject({ status: 422, code: "idempotency_key_reused", type: `${api.url}/problems/idempotency_key_reused` });
    const elsewhere = await post(token, "reused", { type: "body_mass_kg", value: 70, measured_local: "2026-03-01T06:30:00" }, "/v1/athletes/me/metrics");
    expect(elsewhere.status).toBe(422);
    expect((await elsewhere.json()).code).toBe("idempotency_key_reused");
    expect(await writeCounts()).toEqual(counts);
    // The first answer is still what the key replays.
    const replay = await post(token, "reused");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });

  it("lets concurrent requests with one key create one activity: the others get 409 idempotency_key_in_use or the replay", async () => {
    const { id, token } = await writer();
    const responses = await Promise.all(Array.from({ length: 6 }, () => post(token, "concurrent", { ...RUN, name: "Concurrent" })));
    const fresh = responses.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null);
    expect(fresh).toHaveLength(1);
    const created = await fresh[0]!.json();
    for (const r of responses.filter((x) => x !== fresh[0])) {
      if (r.status === 409) {
        expect(r.headers.get("retry-after")).toBe("1");
        expect((await r.json()).code).toBe("idempotency_key_in_use");
      } else {
        expect(r.status).toBe(201);
        expect(r.headers.get("idempotent-replayed")).toBe("true");
        expect(await r.json()).toEqual(created);
      }
    }
    expect(await countRows(activities, and(eq(activities.athleteId, id), eq(activities.name, "Concurrent")))).toBe(1);
    expect(await countRows(events, eq(events.objectId, created.id))).toBe(1);
  });

  it("answers 409 idempotency_key_in_use while the first request with the key is still running", async () => {
    const { id, token } = await writer();
    const { first, second } = await slowEvents(1, async () => {
      const firstP = post(token, "in-flight", { ...RUN, name: "Slow" });
      await new Promise((r) => setTimeout(r, 300));
      const second = await post(token, "in-flight", { ...RUN, name: "Slow" });
      return { first: await firstP, second };
    });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const created = await first.json();
    if (process.env.TEST_DATABASE_URL) {
      // PostgreSQL runs the two requests side by side: the second sees the key claimed, not answered.
      expect(second.status).toBe(409);
      expect(second.headers.get("retry-after")).toBe("1");
      expect(await second.json()).toMatchObject({ code: "idempotency_key_in_use", status: 409 });
    } else {
      // PGlite runs one transaction at a time, so the second request waits for the first and replays it.
      expect(second.status).toBe(201);
      expect(second.headers.get("idempotent-replayed")).toBe("true");
      expect(await second.json()).toEqual(created);
    }
    expect(await countRows(activities, and(eq(activities.athleteId, id), eq(activities.name, "Slow")))).toBe(1);
    // Once the first has finished, the key replays it.
    const later = await post(token, "in-flight", { ...RUN, name: "Slow" });
    expect(later.headers.get("idempotent-replayed")).toBe("true");
    expect(await later.json()).toEqual(created);
  });

  it("keeps keys per principal: another athlete may use the same key, two tokens of one athlete share it", async () => {
    const a = await writer();
    const b = await writer();
    const fromA = await post(a.token, "shared-name");
    const fromB = await post(b.token, "shared-name");
    expect(fromA.status).toBe(201);
    expect(fromB.status).toBe(201);
    expect(fromB.headers.get("idempotent-replayed")).toBeNull();
    const [bodyA, bodyB] = [await fromA.json(), await fromB.json()];
    expect(bodyA.id).not.toBe(bodyB.id);
    expect(bodyB.athlete_id).toBe(b.id);

    const secondTokenOfA = await api.pat(a.id, ["activities.write"]);
    const replay = await post(secondTokenOfA, "shared-name");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect((await replay.json()).id).toBe(bodyA.id);
  });

  it("frees the key when the request fails, so a corrected retry with it runs", async () => {
    const { token } = await writer();
    const other = await api.person();
    const bad = await post(token, "retry-me", { ...RUN, sport_type: "parkour" });
    expect(bad.status).toBe(400);
    const refused = await post(token, "retry-me", RUN, `/v1/athletes/${other.id}/activities`);
    expect(refused.status).toBe(403);
    expect(await countRows(idempotencyKeys, eq(idempotencyKeys.key, "retry-me"))).toBe(0);

    const ok = await post(token, "retry-me", { ...RUN, name: "Corrected" });
    expect(ok.status).toBe(201);
    expect(ok.headers.get("idempotent-replayed")).toBeNull();
    expect((await ok.json()).name).toBe("Corrected");
  });

  it("frees the key when the write fails inside its transaction (500), so the retry runs", async () => {
    const { token } = await writer();
    const db = await api.db();
    await db.execute(sql`create function refuse_event() returns trigger language plpgsql as $$
      begin raise exception 'events refused by test'; end $$`);
    await db.execute(sql`create trigger refuse_event before insert on events for each row execute function refuse_event()`);
    let failed: Response;
    try {
      failed = await post(token, "after-500");
    } finally {
      await db.execute(sql`drop trigger refuse_event on events`);
      await db.execute(sql`drop function refuse_event()`);
    }
    expect(failed.status).toBe(500);
    const ok = await post(token, "after-500");
    expect(ok.status).toBe(201);
    expect(ok.headers.get("idempotent-replayed")).toBeNull();
  });

  it("keeps a key for 24 hours: after that the same key runs a new request", async () => {
    const { token } = await writer();
    const first = await (await post(token, "day-old")).json();
    const db = await api.db();
    await db
      .update(idempotencyKeys)
      .set({ createdAt: new Date(Date.now() - 24 * 3_600_000 - 60_000) })
      .where(eq(idempotencyKeys.key, "day-old"));
    const later = await post(token, "day-old", { ...RUN, name: "A day later" });
    expect(later.status).toBe(201);
    expect(later.headers.get("idempotent-replayed")).toBeNull();
    expect((await later.json()).id).not.toBe(first.id);
  });

  it("refuses a key that is empty, too long or not visible ASCII, naming the header", async () => {
    const { token } = await writer();
    const counts = await writeCounts();
    for (const key of ["", "x".repeat(256), "has space"]) {
      const res = await api.call(token, "POST", "/v1/athletes/me/activities", { body: RUN, headers: { "idempotency-key": key } });
      expect(res.status, JSON.stringify(key)).toBe(400);
      expect(await res.json()).toMatchObject({
        code: "invalid_request",
        errors: [expect.objectContaining({ field: "Idempotency-Key" })],
      });
    }
    expect(await writeCounts()).toEqual(counts);
  });
});

describe("stored answers at rest", () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close();
    delete process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS;
    resetEnvForTests();
  });

  /** Every stored row as PostgreSQL prints it, every column included. */
  async function storedText(): Promise<string[]> {
    const db = await api.db();
    return rowsOf<{ t: string }>(await db.execute(sql`select ${idempotencyKeys}::text as t from ${idempotencyKeys}`)).map((r) => r.t);
  }

  /** A confidential app's client-credentials token, from POST /oauth/token as an app gets one. */
  async function appToken(): Promise<string> {
    return (await api.app({ name: "Idem App" })).token;
  }

  it("keeps a webhook subscription's whsec_ secret sealed in idempotency_keys, and the replay still returns it", async () => {
    process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
    resetEnvForTests();
    const receiver = await startReceiver(handshakeThen(() => 200));
    closers.push(() => receiver.close());
    const token = await appToken();
    const body = { url: receiver.url, events: ["activity.created"] };

    const first = await post(token, "subscribe-sealed", body, "/v1/app/webhooks");
    expect(first.status, await first.clone().text()).toBe(201);
    const firstText = await first.text();
    const created = JSON.parse(firstText) as { id: string; secret: string };
    expect(created.secret).toMatch(/^whsec_/);

    const rows = await storedText();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row).not.toContain("whsec_");
      expect(row).not.toContain(created.secret.slice("whsec_".length));
    }

    const replay = await post(token, "subscribe-sealed", body, "/v1/app/webhooks");
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe(firstText);
    expect(receiver.requests).toHaveLength(1);
  });

  it("seals every stored answer, not only those with secrets", async () => {
    const { token } = await writer();
    const res = await post(token, "sealed-activity", { ...RUN, name: "Plainly visible name" });
    expect(res.status).toBe(201);
    const [row] = await (await api.db()).select().from(idempotencyKeys).where(eq(idempotencyKeys.key, "sealed-activity"));
    expect(Object.keys(row!.responseBody as object)).toEqual(["sealed"]);
    expect(JSON.stringify(row!.responseBody)).not.toContain("Plainly visible name");
  });

  it("prunes keys older than 24 hours and keeps younger ones", async () => {
    const { token } = await writer();
    expect((await post(token, "prune-old")).status).toBe(201);
    expect((await post(token, "prune-young")).status).toBe(201);
    const db = await api.db();
    await db.update(idempotencyKeys).set({ createdAt: new Date(Date.now() - 24 * 3_600_000 - 60_000) }).where(eq(idempotencyKeys.key, "prune-old"));
    await db.update(idempotencyKeys).set({ createdAt: new Date(Date.now() - 23 * 3_600_000) }).where(eq(idempotencyKeys.key, "prune-young"));

    await pruneIdempotencyKeys(db);
    expect(await countRows(idempotencyKeys, eq(idempotencyKeys.key, "prune-old"))).toBe(0);
    expect(await countRows(idempotencyKeys, eq(idempotencyKeys.key, "prune-young"))).toBe(1);
  });
});
