import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { sql } from "drizzle-orm";
import { PGlite } from "@electric-sql/pglite";
import { openDatabase, setDbHandleForTests, type DbHandle } from "../db/client";
import { isDatabaseUnavailable } from "./db-errors";
import { setupApi } from "../testing/fixtures";
import { writeCounts } from "../testing/rows";
import { serveOverWire } from "../testing/pglite-wire";
import { startTcpProxy, type TcpProxy } from "../testing/tcp-proxy";
import { generateToken } from "../tokens/format";
import { handleMcpRequest } from "../mcp/handler";
import { resetKeyCacheForTests } from "../oauth/keys";

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

describe("the token-signing keys while the database is gone", () => {
  it("answer 503 service_unavailable with Retry-After on a process that has not read them yet, and are served once it is back", async () => {
    resetKeyCacheForTests();
    proxy.cut();
    let during: Response;
    try {
      during = await fetch(`${api.url}/oauth/jwks`, { headers: { origin: "https://app.example" } });
    } finally {
      proxy.restore();
    }
    expect(during.status).toBe(503);
    expect(during.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(during.headers.get("access-control-allow-origin")).toBe("*");
    expect(await during.json()).toMatchObject({ code: "service_unavailable" });
    await expect.poll(async () => (await fetch(`${api.url}/oauth/jwks`)).status, { timeout: 10_000 }).toBe(200);
    expect(((await (await fetch(`${api.url}/oauth/jwks`)).json()) as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
  });
});

describe("an MCP tool whose query finds the database gone", () => {
  it("is answered 503 service_unavailable with Retry-After, not as a tool's error: on the direct path and on the SDK's", async () => {
    const p = await api.person();
    const token = await api.pat(p.id);
    const created = await api.call(token, "POST", "/v1/athletes/me/activities", { body: RUN });
    const { id } = (await created.json()) as { id: string };
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_activity", arguments: { id } } });
    const ways = [
      () => fetch(`${api.url}/mcp`, { method: "POST", headers, body }),
      () => handleMcpRequest(new Request(`${api.url}/mcp`, { method: "POST", headers, body }), { direct: false }),
    ];
    for (const send of ways) {
      // The token's lookup goes through; the activity's id is first sent by the tool's own query.
      const cut = proxy.cutAt(id);
      const during = await send();
      await cut;
      proxy.restore();
      await expectUnavailable(during);
      // The pool may take a request or two to reconnect (those answer 503 as well); then the tool answers.
      await expect.poll(async () => (await send()).status, { timeout: 10_000 }).toBe(200);
      const after = await send();
      expect(((await after.json()) as { result: { structuredContent: { id: string } } }).result.structuredContent.id).toBe(id);
    }
  });
});

/**
 * postgres.js writes a transaction's next statement, or the ROLLBACK it sends when the callback
 * fails, from a setImmediate; when the connection has already closed its socket is null there,
 * and the TypeError escapes every caller (porsager/postgres#1208). These run the transaction on
 * the service's own client, through the proxy, and watch for anything thrown uncaught.
 */
describe("a connection lost inside a transaction", () => {
  /**
   * Runs `body`, then queries until the pool has reconnected and answered (the loop has turned
   * well past any write postgres.js scheduled for the lost connection), and asserts that nothing
   * was thrown uncaught meanwhile and that the connections came back.
   */
  async function expectNothingUncaught(body: () => Promise<void>): Promise<void> {
    const thrown: string[] = [];
    const onUncaught = (err: unknown) => void thrown.push(String(err));
    process.on("uncaughtException", onUncaught);
    const after: unknown[] = [];
    try {
      await body();
      for (let i = 0; i < 3; i++) after.push(await handle.db.execute(sql`select 1 as one`).catch((e: unknown) => String(e)));
    } finally {
      process.off("uncaughtException", onUncaught);
    }
    expect(thrown).toEqual([]);
    expect(after).toEqual(Array(3).fill([{ one: 1 }]));
  }

  it("throws nothing uncaught when the callback sends its next statement after the close", async () => {
    await expectNothingUncaught(async () => {
      let closed = () => {};
      const afterClose = new Promise<void>((resolve) => (closed = resolve));
      const tx = handle.db.transaction(async (t) => {
        await t.execute(sql`select 1`);
        proxy.cut();
        await afterClose;
        await t.execute(sql`select 2`);
      });
      // The transaction fails as soon as postgres.js has processed the close; only then does
      // the callback, idle until now, send its next statement.
      tx.catch(() => closed());
      const err = await tx.then(
        () => expect.unreachable("the transaction committed"),
        (e: unknown) => e,
      );
      expect(isDatabaseUnavailable(err)).toBe(true);
      proxy.restore();
    });
  });

  // Two connections at once: PGlite over the wire serves one session at a time.
  it.runIf(process.env.TEST_DATABASE_URL)(
    "knows every connection the outage closed by the time the first failure surfaces: the next statement reconnects",
    async () => {
      // The transaction's connection opens first, so its close is read first; a second
      // connection is idle in the pool beside it when the database goes.
      let inside = () => {};
      const began = new Promise<void>((resolve) => (inside = resolve));
      const tx = handle.db.transaction(async (t) => {
        await t.execute(sql`select 1`);
        inside();
        await new Promise(() => {});
      });
      await began;
      expect(await handle.db.execute(sql`select 2 as two`)).toEqual([{ two: 2 }]);
      // What the caller does first on hearing of the failure is to query again: that statement
      // must go to a new connection, not to the idle one whose close was read but not yet processed.
      const next = tx.then(
        () => expect.unreachable("the transaction committed"),
        () => {
          proxy.restore();
          return handle.db.execute(sql`select 3 as three`);
        },
      );
      proxy.cut();
      expect(await next).toEqual([{ three: 3 }]);
    },
  );

  it("throws nothing uncaught when a statement sent while the connection closes fails the callback", async () => {
    await expectNothingUncaught(async () => {
      const marker = `cut-${randomBytes(4).toString("hex")}`;
      const cut = proxy.cutAt(marker);
      const tx = handle.db.transaction(async (t) => {
        // In flight when the proxy cuts: it fails with the socket's error, and the callback's
        // next statement goes to a connection postgres.js has not yet seen close.
        await t.execute(sql.raw(`select '${marker}'`)).catch(() => {});
        await t.execute(sql`select 2`);
      });
      const err = await tx.then(
        () => expect.unreachable("the transaction committed"),
        (e: unknown) => e,
      );
      await cut;
      expect(isDatabaseUnavailable(err)).toBe(true);
      proxy.restore();
    });
  });
});
