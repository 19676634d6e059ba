import "server-only";
import net from "node:net";
import path from "node:path";
import { mkdirSync } from "node:fs";
import type { ExtractTablesWithRelations } from "drizzle-orm";
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from "drizzle-orm/pg-core";
import { getEnv } from "../env";
import { log } from "../log";
import * as schema from "./schema";

export type Schema = typeof schema;
/** A database or an open transaction: every query function takes one (STYLE §10). */
export type Db = PgDatabase<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;

export type DbHandle = {
  db: Db;
  kind: "pglite" | "postgres";
  close: () => Promise<void>;
};

const MIGRATIONS = path.join(process.cwd(), "drizzle");

// One handle per process on globalThis: hot reload re-evaluates modules, and PGlite must
// never open one directory twice.
const g = globalThis as unknown as { __aasDb?: Promise<DbHandle> };

async function openPglite(dataDir: string | undefined): Promise<DbHandle> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  const { migrate } = await import("drizzle-orm/pglite/migrator");
  let dir: string | undefined;
  if (dataDir) {
    dir = path.resolve(dataDir, "pglite");
    mkdirSync(dir, { recursive: true });
  }
  const client = new PGlite(dir);
  await client.waitReady;
  const db = drizzle({ client, schema });
  await migrate(db, { migrationsFolder: MIGRATIONS });
  return { db: db as unknown as Db, kind: "pglite", close: () => client.close() };
}

/**
 * The sockets postgres.js connects with, hardened for a database that goes away. Two
 * behaviours of postgres.js 3.4 meet there:
 * - A connection the server closes (FIN) while a query waits for it is reconnected at once
 *   and forever: behind a proxy or pooler whose database is gone (it accepts, then closes),
 *   every request would hang instead of answering 503.
 * - When a connection closes inside `sql.begin()`, its ROLLBACK is written to the already
 *   released socket from a setImmediate: an uncaught TypeError, and the connection never
 *   sends again (porsager/postgres#1208, #1154).
 * So a close the client did not ask for is reported as the error it is, first, and the
 * `close` event reaches postgres.js only after writes already scheduled have run (into the
 * destroyed socket, harmlessly), leaving the connection clean to reconnect. (With TLS,
 * postgres.js wraps this socket in its own and keeps its own behaviour.)
 */
function hardenedSocket() {
  let next = 0;
  return (o: { host: string[]; port: number[]; path?: string | false }): net.Socket => {
    const i = next++ % Math.max(1, o.host.length);
    const socket = o.path ? net.connect(o.path) : net.connect(o.port[i] ?? 5432, o.host[i] ?? "localhost");
    socket.once("end", () => {
      if (!socket.writableEnded) {
        socket.destroy(Object.assign(new Error("The database closed the connection."), { code: "ECONNRESET" }));
      }
    });
    // `hadError` is passed as false so that postgres.js also fails the queries it handed this
    // connection while the close was deferred (with true it assumes `error` already did).
    const on = socket.on.bind(socket);
    socket.on = ((event: string, listener: (...args: unknown[]) => void) =>
      event === "close" ? on(event, () => setTimeout(() => listener(false), 0)) : on(event, listener)) as typeof socket.on;
    return socket;
  };
}

type PostgresJs = import("postgres").Sql;

/**
 * drizzle sends every query that was not `.prepare(name)`d as an unnamed statement, and for
 * those postgres.js first asks the server to describe the parameters: two round trips, and a
 * parse and plan on the server every time. Asking postgres.js to prepare them instead makes it
 * keep one named statement per distinct SQL text on each connection and reuse it: one round
 * trip, no re-parse. (Measured in bench/README.md: PostgreSQL's CPU per request fell by about
 * three quarters.) The SQL texts are bounded: drizzle writes values as parameters. Behind a
 * transaction-mode pooler that cannot keep named statements, `?prepare=false` in
 * `DATABASE_URL` turns this off (postgres.js reads it and it wins over the per-query option).
 */
function preparingStatements(sql: PostgresJs): PostgresJs {
  return new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop === "unsafe") {
        return (query: string, params?: unknown[], opts?: object) =>
          target.unsafe(query, params as never, { ...opts, prepare: true });
      }
      if (prop === "begin" || prop === "savepoint") {
        return (...args: unknown[]) => {
          const fn = args.pop() as (inner: PostgresJs) => unknown;
          const method = Reflect.get(target, prop, receiver) as (...a: unknown[]) => unknown;
          return method.call(target, ...args, (inner: PostgresJs) => fn(preparingStatements(inner)));
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

async function openPostgres(url: string, opts: { max?: number } = {}): Promise<DbHandle> {
  const { default: postgres } = await import("postgres");
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const { migrate } = await import("drizzle-orm/postgres-js/migrator");
  // Migrate on one connection under an advisory lock, so instances starting together take turns.
  const migrator = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrator`select pg_advisory_lock(7411)`;
    await migrate(drizzle({ client: migrator }), { migrationsFolder: MIGRATIONS });
    await migrator`select pg_advisory_unlock(7411)`;
  } finally {
    await migrator.end();
  }
  const client = postgres(url, {
    // postgres.js sizes the pool at 10, or as `?max=` in the URL says.
    ...(opts.max ? { max: opts.max } : {}),
    onnotice: () => {},
    connect_timeout: 5,
    idle_timeout: 60,
    // A documented option ("Custom socket" in postgres.js's README) its types lack.
    ...({ socket: hardenedSocket() } as object),
  });
  const db = drizzle({ client: preparingStatements(client), schema });
  return { db: db as unknown as Db, kind: "postgres", close: () => client.end({ timeout: 5 }) };
}

export async function openDatabase(opts: { url?: string; dataDir?: string; max?: number }): Promise<DbHandle> {
  return opts.url ? openPostgres(opts.url, opts) : openPglite(opts.dataDir);
}

/** The process's database, opened and migrated on first use. A failed open is retried on the next call. */
export function getDbHandle(): Promise<DbHandle> {
  if (!g.__aasDb) {
    const env = getEnv();
    const opening = openDatabase({ url: env.databaseUrl, dataDir: env.dataDir }).then(
      (h) => {
        log.info("database ready", { kind: h.kind });
        return h;
      },
      (err: unknown) => {
        g.__aasDb = undefined;
        throw err;
      },
    );
    g.__aasDb = opening;
  }
  return g.__aasDb;
}

export async function getDb(): Promise<Db> {
  return (await getDbHandle()).db;
}

/** Tests install their own database (in-memory PGlite or a fresh PostgreSQL database). */
export function setDbHandleForTests(handle: DbHandle | undefined): void {
  g.__aasDb = handle ? Promise.resolve(handle) : undefined;
}

/**
 * Something built once per database handle and kept with it (a prepared statement, a batcher):
 * `perDatabase(build)(db)` builds on first use. Tests swap databases; each gets its own.
 */
export function perDatabase<T>(build: (db: Db) => T): (db: Db) => T {
  const built = new WeakMap<Db, T>();
  return (db) => {
    let value = built.get(db);
    if (value === undefined) {
      value = build(db);
      built.set(db, value);
    }
    return value;
  };
}

/** Rows of a raw `db.execute`: PGlite answers `{ rows }`, postgres.js an array. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}
