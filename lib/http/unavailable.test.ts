import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { PGlite } from "@electric-sql/pglite";
import { openDatabase, setDbHandleForTests, type DbHandle } from "../db/client";
import { setupApi } from "../testing/fixtures";
import { writeCounts } from "../testing/rows";
import { serveOverWire } from "../testing/pglite-wire";
import { startTcpProxy, type TcpProxy } from "../testing/tcp-proxy";
import { generateToken } from "../tokens/format";

const api = setupApi();

const RUN = { name: "Run", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800 };

// The service talks to a real PostgreSQL server through a TCP proxy the test can cut: the
// machine's PostgreSQL when TEST_DATABASE_URL is set, otherwise an in-memory PGlite served
// over the wire protocol. Either way the service's own postgres.js client sees the outage.
let proxy: TcpProxy;
let handle: DbHandle;
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const base = process.env.TEST_DATABASE_URL;
  let upstream: { host: string; port: number };
  let database: string;
  if (base) {
    database = `aas_test_${randomBytes(6).toString("hex")}`;
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${database}`);
    cleanup.push(async () => {
      await admin.unsafe(`drop database if exists ${database} with (force)`);
      await admin.end();
    });
    const url = new URL(base);
    upstream = { host: url.hostname, port: Number(url.port || 5432) };
  } else {
    const pglite = new PGlite();
    const wire = await serveOverWire(pglite);
    cleanup.push(async () => {
      await wire.close();
      await pglite.close();
    });
    upstream = wire;
    database = "template1";
  }
  proxy = await startTcpProxy(upstream);
  cleanup.unshift(() => proxy.close());
  // PGlite is one backend: one connection at a time.
  handle = await openDatabase({ url: `postgres://postgres@127.0.0.1:${proxy.port}/${database}`, max: base ? 3 : 1 });
  cleanup.unshift(() => handle.close());
  setDbHandleForTests(handle);
});

afterAll(async () => {
  for (const step of cleanup) await step().catch(() => {});
});

async function expectUnavailable(res: Response) {
  expect(res.status).toBe(503);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
  expect(res.headers.get("ratelimit-policy")).not.toBeNull();
  expect(await res.json()).toMatchObject({
    type: `${api.url}/problems/service_unavailable`,
    status: 503,
    code: "service_unavailable",
    detail: expect.any(String),
  });
}

describe("503 when the database cannot be reached", () => {
  it("answers service_unavailable with Retry-After while the database is gone, and recovers by itself", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    expect((await api.call(token, "GET", "/v1/athletes/me")).status).toBe(200);
    const counts = await writeCounts();

    proxy.cut();
    try {
      await expectUnavailable(await api.call(token, "GET", "/v1/athletes/me"));
      await expectUnavailable(await api.call(token, "GET", "/v1/athletes/me/activities"));
      await expectUnavailable(await api.call(token, "POST", "/v1/athletes/me/activities", { body: RUN }));
      // A well-formed token cannot be checked without the database either: 503, not 401.
      await expectUnavailable(await api.call(generateToken("pat"), "GET", "/v1/athletes/me"));
    } finally {
      proxy.restore();
    }

    // No restart, no reconnect call: the very next request is served.
    const back = await api.call(token, "GET", "/v1/athletes/me");
    expect(back.status).toBe(200);
    expect((await back.json()).id).toBe(p.id);
    expect(await writeCounts()).toEqual(counts);
    expect((await api.call(token, "POST", "/v1/athletes/me/activities", { body: RUN })).status).toBe(201);
  });

  it("survives repeated outages", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    for (let i = 0; i < 3; i++) {
      proxy.cut();
      await expectUnavailable(await api.call(token, "GET", "/v1/athletes/me"));
      proxy.restore();
      expect((await api.call(token, "GET", "/v1/athletes/me")).status).toBe(200);
    }
  });

  it("rolls back a write cut off mid-transaction, and its Idempotency-Key runs the retry after recovery", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    const counts = await writeCounts();
    // A name no other statement carries: the proxy cuts as the activity row is sent, inside
    // the transaction that has already claimed the key.
    const name = `Cut off ${randomBytes(4).toString("hex")}`;

    const cut = proxy.cutAt(name);
    const during = await api.call(token, "POST", "/v1/athletes/me/activities", {
      body: { ...RUN, name },
      headers: { "idempotency-key": "cut-off" },
    });
    await cut;
    proxy.restore();
    await expectUnavailable(during);
    expect(await writeCounts()).toEqual(counts);

    const retry = await api.call(token, "POST", "/v1/athletes/me/activities", {
      body: { ...RUN, name },
      headers: { "idempotency-key": "cut-off" },
    });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    const after = await writeCounts();
    expect(after.activities).toBe(counts.activities + 1);
    expect(after.events).toBe(counts.events + 1);
  });

  it("serves reads and concurrent writes normally once the database is back", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    proxy.cut();
    await expectUnavailable(await api.call(token, "POST", "/v1/athletes/me/activities", { body: RUN }));
    proxy.restore();
    for (let i = 0; i < 10; i++) expect((await api.call(token, "GET", "/v1/athletes/me/activities")).status).toBe(200);
    const writes = await Promise.all(Array.from({ length: 10 }, () => api.call(token, "POST", "/v1/athletes/me/activities", { body: RUN })));
    expect(writes.map((r) => r.status)).toEqual(Array(10).fill(201));
  });
});
