import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import { sessionCookieFor } from "../auth/test-session";
import type { Ctx } from "../auth/actor";
import { getDbHandle, setDbHandleForTests, type Db } from "../db/client";
import { activities, events, metrics, oauthClients, oauthGrants } from "../db/schema";
import { inTransaction, type Tx } from "../db/transaction";
import { createActivity } from "../activities/create-activity";
import { newId } from "../ids";
import { setupApi } from "../testing/fixtures";
import { countRows } from "../testing/rows";

const api = setupApi();

/**
 * What the test database was asked to do: transactions opened on the database itself, and
 * transactions opened inside one (drizzle turns those into savepoints), with the callbacks'
 * handles, so a test can tell which transaction a verb wrote in.
 */
const opened = { top: 0, nested: 0 };

function watched(db: Db): Db {
  const watchTx = (tx: object): object =>
    new Proxy(tx, {
      get(target, prop, receiver) {
        if (prop !== "transaction") return Reflect.get(target, prop, receiver);
        return (fn: (inner: object) => unknown, config?: unknown) => {
          opened.nested++;
          const open = Reflect.get(target, prop, receiver) as (f: (t: object) => unknown, c?: unknown) => Promise<unknown>;
          return open.call(receiver, (inner) => fn(watchTx(inner)), config);
        };
      },
    });
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== "transaction") return Reflect.get(target, prop, receiver);
      return (fn: (tx: object) => unknown, config?: unknown) => {
        opened.top++;
        return target.transaction((tx) => fn(watchTx(tx)) as Promise<unknown>, config as undefined);
      };
    },
  });
}

beforeAll(async () => {
  const handle = await getDbHandle();
  setDbHandleForTests({ ...handle, db: watched(handle.db) });
});

beforeEach(() => {
  opened.top = 0;
  opened.nested = 0;
});

/**
 * From now on a write for `athleteId` fails at its event, after its own row was written: a
 * trigger makes the outbox refuse the athlete's events, so the failure comes from PostgreSQL
 * itself, in the statement after the first.
 */
async function refuseEventsOf(athleteId: string): Promise<void> {
  const db = await api.db();
  const column = sql.raw(events.athleteId.name);
  await db.execute(sql`create table if not exists test_refused_athletes (athlete_id text primary key)`);
  await db.execute(sql`
    create or replace function test_refuse_events() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from test_refused_athletes r where r.athlete_id = new.${column}) then
        raise exception 'the outbox refuses this athlete''s events';
      end if;
      return new;
    end $$`);
  await db.execute(sql`drop trigger if exists test_refuse_events on ${events}`);
  await db.execute(sql`create trigger test_refuse_events before insert on ${events} for each row execute function test_refuse_events()`);
  await db.execute(sql`insert into test_refused_athletes values (${athleteId})`);
}

async function person() {
  const p = await api.person();
  return { ...p, cookie: await sessionCookieFor(p.id) };
}

function consoleCall(cookie: string, method: string, path: string, body?: unknown) {
  return fetch(api.url + path, {
    method,
    headers: { cookie, origin: api.url, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const run = { name: "Morning run", sport_type: "run", start_local: "2026-03-01T07:00:00", elapsed_time_s: 1800 };

describe("one owner of the transaction: /v1 writes", () => {
  it("run each write verb in the one transaction the wrapper opened, with no savepoint", async () => {
    const me = await person();
    const token = await api.pat(me.id);
    opened.top = 0;

    const created = await api.call(token, "POST", "/v1/athletes/me/activities", { body: run });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const renamed = await api.call(token, "PATCH", `/v1/activities/${id}`, { body: { name: "Evening run" } });
    expect(renamed.status).toBe(200);
    const weighed = await api.call(token, "POST", "/v1/athletes/me/metrics", {
      body: { type: "body_mass_kg", value: 70, measured_local: "2026-03-01T07:00:00" },
    });
    expect(weighed.status).toBe(201);

    expect(opened).toEqual({ top: 3, nested: 0 });
  });

  it("leave nothing behind when a write fails after its first statement", async () => {
    const me = await person();
    const token = await api.pat(me.id);
    const kept = await api.call(token, "POST", "/v1/athletes/me/activities", { body: run });
    const { id } = (await kept.json()) as { id: string };
    await refuseEventsOf(me.id);

    const created = await api.call(token, "POST", "/v1/athletes/me/activities", { body: { ...run, name: "Lost" } });
    expect(created.status).toBe(500);
    const renamed = await api.call(token, "PATCH", `/v1/activities/${id}`, { body: { name: "Lost" } });
    expect(renamed.status).toBe(500);
    const weighed = await api.call(token, "POST", "/v1/athletes/me/metrics", {
      body: { type: "body_mass_kg", value: 70, measured_local: "2026-03-01T07:00:00" },
    });
    expect(weighed.status).toBe(500);

    expect(await countRows(activities, eq(activities.athleteId, me.id))).toBe(1);
    expect(await countRows(activities, and(eq(activities.athleteId, me.id), eq(activities.name, "Morning run")))).toBe(1);
    expect(await countRows(metrics, eq(metrics.athleteId, me.id))).toBe(0);
    expect(await countRows(events, eq(events.athleteId, me.id))).toBe(1);
  });
});

describe("one owner of the transaction: console writes", () => {
  it("run each write verb in the one transaction the console wrapper opened, with no savepoint", async () => {
    const me = await person();
    const clientId = `tx-${newId("act").slice(-8)}`;
    const db = await api.db();
    await db.insert(oauthClients).values({ clientId, ownerId: (await api.person()).id, name: "App", kind: "public", redirectUris: ["https://a.example/cb"] });
    const grantId = newId("grt");
    await db.insert(oauthGrants).values({ id: grantId, userId: me.id, clientId, scopes: ["athlete.read"] });
    opened.top = 0;

    const writes: [string, string, unknown, number][] = [
      ["PATCH", "/api/console/profile", { name: "Renamed", timezone: "Europe/Paris" }, 200],
      ["POST", "/api/console/activities", run, 201],
      ["POST", "/api/console/teams", { name: "Squad" }, 201],
      ["DELETE", `/api/console/connected-apps/${grantId}`, undefined, 200],
    ];
    for (const [method, path, body, status] of writes) {
      const res = await consoleCall(me.cookie, method, path, body);
      expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBe(status);
    }
    expect(opened).toEqual({ top: writes.length, nested: 0 });
  });

  it("leave nothing behind when a write fails after its first statement", async () => {
    const me = await person();
    await refuseEventsOf(me.id);
    const res = await consoleCall(me.cookie, "POST", "/api/console/activities", run);
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ code: "internal_error" });
    expect(await countRows(activities, eq(activities.athleteId, me.id))).toBe(0);
    expect(await countRows(events, eq(events.athleteId, me.id))).toBe(0);
  });
});

describe("one owner of the transaction: the types", () => {
  it("let a write verb run only inside a transaction, which it cannot nest", async () => {
    const me = await api.person();
    const db = await api.db();
    const ctx: Ctx = { db, actor: { kind: "session", userId: me.id } };
    // @ts-expect-error a plain database is not a transaction: a write verb cannot be called outside one
    const outside = () => createActivity({ ctx, athleteId: "me", input: run });
    void outside;
    const made = await inTransaction(db, (tx: Tx) => {
      // @ts-expect-error a verb's transaction cannot open another (it would be a savepoint)
      const nest = () => tx.transaction(async () => {});
      void nest;
      return createActivity({ ctx: { ...ctx, db: tx }, athleteId: "me", input: { ...run, sport_type: "run" } });
    });
    expect(await countRows(activities, eq(activities.id, made.id))).toBe(1);
  });
});
