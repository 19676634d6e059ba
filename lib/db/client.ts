import "server-only";
import net from "node:net";
import path from "node:path";
import { accessSync, constants, mkdirSync, readFileSync } from "node:fs";
import { getTableColumns, sql, type Column, type ExtractTablesWithRelations, type Name, type Query, type SQL, type SQLWrapper } from "drizzle-orm";
import { PgDatabase, PgDialect, type PgInsertValue, type PgQueryResultHKT, type PgTable } from "drizzle-orm/pg-core";
import { getEnv } from "../env";
import { log } from "../log";
import { DirectoryInUse, lockDataDir } from "./directory-lock";
import { errorCode, isConnectionFailure, type LOGIN_REFUSED_CODES } from "./connection-errors";
import type { Sql } from "postgres";
import { postgresConnection } from "./postgres-url";
import * as schema from "./schema";

export { errorCode };

export type Schema = typeof schema;
/**
 * A database or an open transaction: every query function takes one (STYLE §10). A write verb
 * takes a `Tx` (./transaction.ts), which only `inTransaction` makes.
 */
export type Db = PgDatabase<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;

export type DbHandle = {
  db: Db;
  kind: "pglite" | "postgres";
  close: () => Promise<void>;
};

const MIGRATIONS = path.join(process.cwd(), "drizzle");

// One handle per process on globalThis: hot reload re-evaluates modules, and PGlite must
// never open one directory twice.
const g = globalThis as unknown as { __aasDb?: Promise<DbHandle> };
/**
 * Whether the process has opened its database once, what it does when the database refuses it
 * before that (`onDatabaseRefused`), and what it checks of a database it has just opened (`checkDatabaseAtOpen`).
 */
type DbState = { opened: boolean; onRefused?: (err: StartRefused) => void; check?: (db: Db) => Promise<void>; onOpened?: () => void };
/** What stops a start that has not yet opened its database: waiting would not change it. */
export type StartRefused = DatabaseRefused | DirectoryInUse;
export const isStartRefused = (err: unknown): err is StartRefused => err instanceof DatabaseRefused || err instanceof DirectoryInUse;
const dbState = ((globalThis as unknown as { __aasDbState?: DbState }).__aasDbState ??= { opened: false });

async function openPglite(dataDir: string | undefined): Promise<DbHandle> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  const { migrate } = await import("drizzle-orm/pglite/migrator");
  let dir: string | undefined;
  let unlock = () => {};
  let client: InstanceType<typeof PGlite>;
  try {
    if (dataDir) {
      dir = path.resolve(dataDir, "pglite");
      mkdirSync(dir, { recursive: true });
      // PGlite reports a directory it cannot write only as "failed to initialize properly".
      accessSync(dir, constants.W_OK);
      // One process at a time: a second would lose the first's writes, and its own.
      unlock = lockDataDir(path.resolve(dataDir));
    }
    client = new PGlite(dir);
    await client.waitReady;
  } catch (err) {
    unlock();
    // Nothing outside this process is waited for: a directory it cannot write, a file where a
    // directory should be, a full disk or a database PGlite cannot read stay so until someone acts.
    throw err instanceof DirectoryInUse ? err : dataDirRefused(err, dataDir);
  }
  try {
    const db = drizzle({ client, schema });
    await migrateOrRefuse(db as unknown as Db, () => migrate(db, { migrationsFolder: MIGRATIONS }), dataDir ? `the embedded database in DATA_DIR (${path.resolve(dataDir)})` : "the embedded database");
    return {
      db: db as unknown as Db,
      kind: "pglite",
      close: async () => {
        await client.close();
        unlock();
      },
    };
  } catch (err) {
    await client.close().catch(() => {});
    unlock();
    throw err;
  }
}

/**
 * The database cannot be used by this start, and waiting would not change that (no such
 * database, a role or password refused, a DATA_DIR this process cannot write, a migration that
 * fails, a database migrated by a newer release). Its message is one sentence for a person,
 * naming the setting and what to do. While the process has never opened its database, the
 * service stops on it (lib/boot.ts, `onDatabaseRefused`); an outage (connection refused, a
 * timeout, a host not yet resolvable) is retried instead, and requests answer 503 meanwhile.
 */
export class DatabaseRefused extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DatabaseRefused";
  }
}

/** A PostgreSQL URL with its password (in the user part or a `password` parameter) masked, to be printed. */
export function maskedUrl(url: string): string {
  return url
    .replace(/^(postgres(?:ql)?:\/\/[^:@/?#]*):[^@/?#]*@/i, "$1:****@")
    .replace(/([?&]password=)[^&#]*/gi, "$1****");
}

/** SQLSTATEs the server answers a login with that no wait changes. */
const LOGIN_REFUSED: Record<(typeof LOGIN_REFUSED_CODES)[number], string> = {
  "3D000": "create that database (createdb) or correct the database name in DATABASE_URL",
  "28000": "create that role, or correct the user in DATABASE_URL (or pg_hba.conf, which may refuse it)",
  "28P01": "correct the password in DATABASE_URL (or the role's password on the server)",
};

/** The deepest message in `err` and its causes: the server's own words under drizzle's "Failed query: …". */
function rootMessage(err: unknown): string {
  let message = err instanceof Error ? err.message : String(err);
  for (let e = (err as { cause?: unknown })?.cause, depth = 0; e && depth < 5; depth++) {
    if (e instanceof Error && e.message) message = e.message;
    e = (e as { cause?: unknown }).cause;
  }
  return message;
}

/** `err` from opening the embedded database as the sentence that stops the service. */
function dataDirRefused(err: unknown, dataDir: string | undefined): DatabaseRefused {
  // PGlite's own file system reports emscripten's errno numbers, with no code or message.
  const EMSCRIPTEN_ERRNO: Record<number, string> = { 2: "EACCES", 63: "EPERM", 69: "EROFS", 54: "ENOTDIR", 20: "EEXIST", 51: "ENOSPC", 44: "ENOENT" };
  const errno = (err as { errno?: unknown })?.errno;
  const code = errorCode(err) ?? (typeof errno === "number" ? EMSCRIPTEN_ERRNO[errno] : undefined);
  const message = err instanceof Error && err.message ? err.message : code ?? String(err);
  if (!dataDir) return new DatabaseRefused(`The embedded database (in memory) could not be opened: ${message}.`, { cause: err });
  const where = `DATA_DIR (${path.resolve(dataDir)})`;
  const uid = typeof process.getuid === "function" ? ` (uid ${process.getuid()})` : "";
  const what =
    code === "EACCES" || code === "EPERM"
      ? `cannot be written by this process${uid}: ${message}. Give the service's user write access to it and what is in it (chown or chmod), or set DATA_DIR to a directory it can write`
      : code === "EROFS"
        ? `is on a read-only file system: ${message}. Set DATA_DIR to a writable directory, or mount it writable`
        : code === "ENOTDIR" || code === "EEXIST"
          ? `cannot be made a directory, because a part of that path is a file: ${message}. Remove or move that file, or set DATA_DIR to another directory`
          : code === "ENOSPC"
            ? `is on a full disk: ${message}. Free space on it (a half-written embedded database is not repaired by waiting)`
            : `could not be opened as the embedded database: ${message}${code ? ` (${code})` : ""}. Check the directory, or set DATA_DIR to another one`;
  return new DatabaseRefused(`${where} ${what}, and start the service again.`, { cause: err });
}

/** `err` from a login to PostgreSQL as the sentence that stops the service, or undefined for an outage (retried). */
function loginRefused(err: unknown, url: string): DatabaseRefused | undefined {
  const code = errorCode(err);
  const todo = code ? LOGIN_REFUSED[code as keyof typeof LOGIN_REFUSED] : undefined;
  if (!todo) return undefined;
  return new DatabaseRefused(`DATABASE_URL (${maskedUrl(url)}) is refused by the server: ${rootMessage(err)} (${code}). ${todo[0]!.toUpperCase()}${todo.slice(1)}, and start the service again.`, { cause: err });
}

type JournalEntry = { tag: string; when: number };

/** This build's migrations, in order, as drizzle-kit recorded them (drizzle/meta/_journal.json). */
function readJournal(): JournalEntry[] {
  return (JSON.parse(readFileSync(path.join(MIGRATIONS, "meta", "_journal.json"), "utf8")) as { entries: JournalEntry[] }).entries;
}

/** The migrations the database records (drizzle's table, on PGlite too): how many, and the newest one's `when`. */
async function appliedMigrations(db: Db): Promise<{ count: number; last: number | null }> {
  const [table] = rowsOf<{ t: string | null }>(await db.execute(sql`select to_regclass('drizzle.__drizzle_migrations')::text as t`));
  if (!table?.t) return { count: 0, last: null };
  const [row] = rowsOf<{ n: string | number; last: string | null }>(await db.execute(sql`select count(*)::text as n, max(created_at)::text as last from drizzle.__drizzle_migrations`));
  return { count: Number(row?.n ?? 0), last: row?.last == null ? null : Number(row.last) };
}

/** How long a migration's statement waits for a table's lock before failing (PostgreSQL's `lock_timeout`). */
const MIGRATION_LOCK_TIMEOUT_MS = 10_000;

/**
 * Runs this build's pending migrations (`run`, drizzle's migrator: all of them in one
 * transaction, so a failure leaves nothing half-applied), after refusing a database that
 * records migrations this build does not know: a newer release migrated it, and this one's
 * writes (an INSERT without a column the newer release made NOT NULL, say) must not reach it.
 * A migration that fails stops the service with which one, and the server's own message and
 * code; a lost connection is thrown as it is (an outage, retried).
 */
async function migrateOrRefuse(db: Db, run: () => Promise<void>, where: string): Promise<void> {
  const journal = readJournal();
  const known = journal.at(-1);
  const applied = await appliedMigrations(db);
  if (applied.count > journal.length || (applied.last !== null && known && applied.last > known.when)) {
    throw new DatabaseRefused(
      `${where[0]!.toUpperCase()}${where.slice(1)} was migrated by a newer release of this service (it records ${applied.count} migrations, the last made ${new Date(applied.last ?? 0).toISOString()}; this release knows ${journal.length}, up to ${known?.tag ?? "none"}), and this release must not write to it: run the newer release, or restore the backup taken before the upgrade.`,
    );
  }
  try {
    await run();
  } catch (err) {
    if (isConnectionFailure(err)) throw err;
    throw migrationFailed(err, journal, applied.last, where);
  }
}

/** A failed migration as the sentence that stops the service: which migration, its statement, and the server's message and code. */
function migrationFailed(err: unknown, journal: JournalEntry[], last: number | null, where: string): DatabaseRefused {
  const query = (err as { query?: unknown })?.query;
  const statement = typeof query === "string" ? query.trim() : undefined;
  // drizzle's error names the statement only: the pending migration whose file holds it.
  const migration = statement
    ? journal.find((m) => {
        if (last !== null && m.when <= last) return false;
        try {
          return readFileSync(path.join(MIGRATIONS, `${m.tag}.sql`), "utf8").split("--> statement-breakpoint").some((s) => s.trim() === statement);
        } catch {
          return false;
        }
      })
    : undefined;
  const code = errorCode(err);
  const named = migration ? `Migration drizzle/${migration.tag}.sql` : "A migration";
  const shown = statement ? ` at ${JSON.stringify(statement.length > 300 ? `${statement.slice(0, 300)}…` : statement)}` : "";
  const cause = `${rootMessage(err)}${code ? ` (${code})` : ""}`;
  const todo =
    code === "55P03"
      ? `another session holds a lock on the table it changes, and the migration did not wait more than ${MIGRATION_LOCK_TIMEOUT_MS / 1000} s for it (so as not to hold every reader behind it): start the service again when that session's transaction has ended (pg_stat_activity and pg_locks show it)`
      : "fix the database (or the migration) and start the service again";
  return new DatabaseRefused(`${named} failed on ${where}${shown}: ${cause}. Nothing of this start's migrations was applied; ${todo}.`, { cause: err });
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
 * destroyed socket, harmlessly), leaving the connection clean to reconnect; the closes read in
 * one turn reach it together (`deferClose`). Writes scheduled after the close can only be a
 * still-running transaction's: its guard (`preparingStatements`) stops those. (With TLS,
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
      event === "close" ? on(event, () => deferClose(() => listener(false))) : on(event, listener)) as typeof socket.on;
    return socket;
  };
}

/**
 * The closes deferred so far, delivered together. An outage closes every connection at once,
 * and the first failure it causes (a transaction's) must not surface while the pool still
 * counts another closed connection as open: the caller's next statement would be handed to
 * it and fail too. One timer delivers every close read before it, with no promise
 * continuation running in between (each timer callback of its own is followed by one).
 */
let pendingCloses: (() => void)[] = [];

function deferClose(deliver: () => void): void {
  pendingCloses.push(deliver);
  if (pendingCloses.length > 1) return;
  setTimeout(() => {
    const due = pendingCloses;
    pendingCloses = [];
    let failed: { err: unknown } | undefined;
    for (const close of due) {
      try {
        close();
      } catch (err) {
        failed ??= { err };
      }
    }
    // Every close was delivered; what a listener threw is still thrown, as it would have been.
    if (failed) throw failed.err;
  }, 0);
}


/**
 * A transaction whose connection closed must never write to it again. postgres.js fails a
 * transaction as soon as its connection closes (the close is the error), but the callback may
 * still be running: a statement it sends next, or the ROLLBACK or COMMIT postgres.js sends when
 * the callback settles, is written from a setImmediate into the socket postgres.js has just set
 * to null. That TypeError escapes every caller (porsager/postgres#1208, #1154), and the bytes
 * stay buffered in the connection, so its next connection attempt never sends its startup
 * message and times out.
 *
 * So every transaction gets a guard, and once postgres.js has failed the transaction, the
 * callback is stopped where it stands: its statements and its own result never settle (the
 * stopped callback is garbage like any unreferenced promise), and nothing more is sent. The
 * caller still gets the transaction's rejection. A statement that fails because the connection
 * went (a socket error, a closed connection) is held until postgres.js has processed the close
 * (at most `LOSS_WAIT_MS`), so the callback never reacts to the loss by sending a ROLLBACK
 * into the dying connection. drizzle sends every statement through `unsafe()`, savepoints
 * (nested transactions) through `savepoint()`: those are what the guard covers.
 */
type TransactionGuard = { lost: boolean; whenLost: Promise<void>; markLost: () => void };

const LOSS_WAIT_MS = 5_000;

function transactionGuard(): TransactionGuard {
  let resolve = () => {};
  const guard: TransactionGuard = {
    lost: false,
    whenLost: new Promise<void>((r) => (resolve = r)),
    markLost: () => {
      guard.lost = true;
      resolve();
    },
  };
  return guard;
}

/** What a stopped transaction's statements and callback get: a promise that never settles. */
function stopped<T>(): Promise<T> {
  return new Promise<T>(() => {});
}

/** A failure of the connection rather than an answer from the server (PostgresError). */
function isConnectionLoss(err: unknown): boolean {
  if (!(err instanceof Error) || err.name === "PostgresError") return false;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && (code.startsWith("CONNECT") || /^E[A-Z]+$/.test(code) || code.startsWith("ERR_STREAM"));
}

function guarded<T>(p: PromiseLike<T>, guard: TransactionGuard): Promise<T> {
  return Promise.resolve(p).then(
    (value) => (guard.lost ? stopped<T>() : value),
    async (err: unknown) => {
      if (!guard.lost && isConnectionLoss(err)) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([guard.whenLost, new Promise<void>((r) => (timer = setTimeout(r, LOSS_WAIT_MS)))]);
        clearTimeout(timer);
      }
      if (guard.lost) return stopped<T>();
      throw err;
    },
  );
}

/** A postgres.js query (lazy: it is sent when first awaited) whose outcome passes the guard. */
function guardedQuery<Q extends object>(query: Q, guard: TransactionGuard): Q {
  let outcome: Promise<unknown> | undefined;
  const settle = () => (outcome ??= guarded(query as unknown as PromiseLike<unknown>, guard));
  const proxy: Q = new Proxy(query, {
    get(target, prop) {
      if (prop === "then") return (f?: (v: unknown) => unknown, r?: (e: unknown) => unknown) => settle().then(f, r);
      if (prop === "catch") return (r?: (e: unknown) => unknown) => settle().catch(r);
      if (prop === "finally") return (f?: () => void) => settle().finally(f);
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== "function") return value;
      // Builder methods (`.values()`, `.raw()`) return the query itself: keep the guard on it.
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        return result === target ? proxy : result;
      };
    },
  });
  return proxy;
}

/**
 * drizzle sends every query that was not `.prepare(name)`d as an unnamed statement, and for
 * those postgres.js first asks the server to describe the parameters: two round trips, and a
 * parse and plan on the server every time. Asking postgres.js to prepare them instead makes it
 * keep one named statement per distinct SQL text on each connection and reuse it: one round
 * trip, no re-parse. (Measured in bench/README.md: PostgreSQL's CPU per request fell by about
 * three quarters.) The SQL texts are bounded: drizzle writes values as parameters. Behind a
 * transaction-mode pooler that cannot keep named statements, `?prepare=false` in
 * `DATABASE_URL` turns this off (postgres.js reads it and it wins over the per-query option).
 * Inside a transaction, queries also pass its guard (above).
 */
function preparingStatements(sql: Sql, guard?: TransactionGuard): Sql {
  return new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop === "unsafe") {
        return (query: string, params?: unknown[], opts?: object) => {
          if (guard?.lost) return stopped();
          const q = target.unsafe(query, params as never, { ...opts, prepare: true });
          return guard ? guardedQuery(q, guard) : q;
        };
      }
      if (prop === "begin" || prop === "savepoint") {
        return (...args: unknown[]) => {
          const fn = args.pop() as (inner: Sql) => unknown;
          const method = Reflect.get(target, prop, receiver) as (...a: unknown[]) => Promise<unknown>;
          // A savepoint belongs to the transaction it runs in; a transaction starts a guard.
          const g = prop === "savepoint" && guard ? guard : transactionGuard();
          if (g.lost) return stopped();
          const run = (inner: Sql) => {
            const x = fn(preparingStatements(inner, g));
            return guarded(Array.isArray(x) ? Promise.all(x) : Promise.resolve(x), g);
          };
          const result = method.call(target, ...args, run);
          if (g === guard) return guarded(result, g);
          // Only a closed connection fails a transaction while its callback still runs; any
          // other failure comes after the callback settled, when there is nothing left to stop.
          result.then(undefined, () => g.markLost());
          return result;
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
}

async function openPostgres(url: string, opts: { max?: number; migrationLockTimeoutMs?: number } = {}): Promise<DbHandle> {
  const { default: postgres } = await import("postgres");
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const { migrate } = await import("drizzle-orm/postgres-js/migrator");
  // libpq's forms for a Unix socket and a port, which postgres.js does not read (./postgres-url.ts).
  const { url: pgUrl, options: where } = postgresConnection(url);
  // Migrate on one connection under an advisory lock, so instances starting together take turns.
  const migrator = postgres(pgUrl, { ...where, max: 1, onnotice: () => {} });
  try {
    await migrator`select pg_advisory_lock(7411)`;
    // Only now, so that instances starting together still wait their turn: a migration's own
    // statement that cannot have its table's lock within this fails (and the service stops,
    // saying so) instead of queuing every reader of that table behind it for as long as the
    // query holding the lock runs. The connection ends below; nothing else uses this setting.
    await migrator.unsafe(`set lock_timeout = ${Math.round(opts.migrationLockTimeoutMs ?? MIGRATION_LOCK_TIMEOUT_MS)}`);
    const mdb = drizzle({ client: migrator });
    await migrateOrRefuse(mdb as unknown as Db, () => migrate(mdb, { migrationsFolder: MIGRATIONS }), `the database at DATABASE_URL (${maskedUrl(url)})`);
    await migrator`select pg_advisory_unlock(7411)`;
  } catch (err) {
    throw err instanceof DatabaseRefused ? err : (loginRefused(err, url) ?? err);
  } finally {
    await migrator.end();
  }
  const client = postgres(pgUrl, {
    ...where,
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

/** `migrationLockTimeoutMs`: how long a migration waits for a table's lock on PostgreSQL (10 s; tests shorten it). */
export async function openDatabase(opts: { url?: string; dataDir?: string; max?: number; migrationLockTimeoutMs?: number }): Promise<DbHandle> {
  return opts.url ? openPostgres(opts.url, opts) : openPglite(opts.dataDir);
}

/**
 * What the process does when its database refuses it (`DatabaseRefused`, or `DirectoryInUse`:
 * another process has the embedded database open) before it was ever opened, at whichever
 * attempt meets it: lib/boot.ts stops the service. Once the database has been opened, the same failures
 * are an outage like any other (requests answer 503, lib/http/db-errors.ts).
 */
export function onDatabaseRefused(handler: ((err: StartRefused) => void) | undefined): void {
  dbState.onRefused = handler;
}

/** What the process does once its database has opened, whoever opened it (lib/boot.ts: start-up's seeding and housekeeping). */
export function onDatabaseOpened(handler: (() => void) | undefined): void {
  dbState.onOpened = handler;
}

/**
 * A check of the database once it is open and migrated, before anything uses it (lib/boot.ts:
 * that SECRETS_KEY opens what it holds sealed). A `DatabaseRefused` it throws is handled as the
 * open's own; any other error fails this open, which the next use retries.
 */
export function checkDatabaseAtOpen(check: ((db: Db) => Promise<void>) | undefined): void {
  dbState.check = check;
}

/** The process's database, opened and migrated on first use. A failed open is retried on the next call. */
export function getDbHandle(): Promise<DbHandle> {
  if (!g.__aasDb) {
    const env = getEnv();
    const opening = openDatabase({ url: env.databaseUrl, dataDir: env.dataDir })
      .then(async (h) => {
        try {
          await dbState.check?.(h.db);
        } catch (err) {
          await h.close().catch(() => {});
          throw err;
        }
        return h;
      })
      .then(
        (h) => {
          dbState.opened = true;
          log.info("database ready", { kind: h.kind });
          // After this promise settles: the handler's own getDbHandle() finds it open.
          if (dbState.onOpened) queueMicrotask(dbState.onOpened);
          return h;
        },
        (err: unknown) => {
          g.__aasDb = undefined;
          if (isStartRefused(err) && !dbState.opened) dbState.onRefused?.(err);
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

/** Closes the process's database if it was opened (the process is stopping: scripts/server.mjs). */
export async function closeDb(): Promise<void> {
  const opening = g.__aasDb;
  g.__aasDb = undefined;
  const handle = await opening?.catch(() => undefined);
  await handle?.close();
}

/** Tests install their own database (in-memory PGlite or a fresh PostgreSQL database). */
export function setDbHandleForTests(handle: DbHandle | undefined): void {
  g.__aasDb = handle ? Promise.resolve(handle) : undefined;
  // None: the process is as one that has not opened its database yet.
  if (!handle) dbState.opened = false;
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

/**
 * A column's bare name, for where SQL takes no table before it: an INSERT's column list, an
 * UPDATE's SET, an ON CONFLICT target. Written through the schema, so a rename fails the typecheck.
 */
export function bareColumn(c: { name: string }): Name {
  return sql.identifier(c.name);
}

const dialect = new PgDialect();

/** A statement's text made once, on first use, and run on whatever it is given (a transaction included). */
type Kept<R> = ((db: Db, values?: Record<string, unknown>) => Promise<R>) & {
  /** The text and parameters (placeholders unfilled), for tests that read its plan. */
  query: () => Query;
};

/** The one place that runs a kept text through drizzle's session; `fields` maps rows as a builder's selection does. */
function kept<R>(name: string, write: () => Query, fields?: Parameters<Db["_"]["session"]["prepareQuery"]>[1]): Kept<R> {
  let compiled: Query | undefined;
  const query = () => (compiled ??= write());
  const run = (db: Db, values: Record<string, unknown> = {}) =>
    db._.session.prepareQuery(query(), fields, name, fields !== undefined).execute(values) as Promise<R>;
  return Object.assign(run, { query });
}

/**
 * A statement no builder writes (typed SQL with data-modifying CTEs), turned into its text once:
 * what `.prepare(name)` does for a builder. Its changing values are `sql.placeholder(name)`s,
 * given at each call. drizzle's `db.execute` walks the whole SQL tree again on every call,
 * which for the webhook claim cost some 0.2 ms of the runner's thread a call (bench/README.md).
 * Answers as `db.execute` does (`rowsOf`).
 */
export function compiledStatement(name: string, statement: () => SQL): Kept<unknown> {
  return kept(name, () => dialect.sqlToQuery(statement()));
}

/** A database with no connection: it writes the statements `compiledInsert` keeps, and never runs one. */
const statementWriter: Db = new PgDatabase(dialect, undefined as never, undefined);

/**
 * An insert of one row into `table` that drizzle's builder writes once, for a write on the hot
 * path: the builder turns its tree into text on every call (about 0.1 ms of the thread for an
 * activity's insert; bench/README.md). The statement sets `columns`, and the row must give each
 * of them (null for none), so the list and the row cannot drift apart; a column left out of
 * `columns` takes the database's default (one whose default drizzle computes, `$defaultFn`
 * or `$onUpdate`, is refused). Every column is returned, read as the builder's `.returning()`
 * reads it. Each value goes through its column's encoder as with `.values()` (a `measure` is
 * rounded), null excepted.
 */
export function compiledInsert<T extends PgTable, K extends keyof T["$inferInsert"] & string>(
  name: string,
  table: T,
  columns: readonly K[],
): ((db: Db, row: Required<Pick<T["$inferInsert"], K>>) => Promise<T["$inferSelect"][]>) & { query: () => Query } {
  const all = getTableColumns(table);
  const set = columns.map((k) => [k, all[k]!] as const);
  // The builder computes a `$defaultFn` or `$onUpdate` value for a column it is not given; this
  // statement would leave it to the database instead, so such a column must be in the list.
  const computed = Object.entries(all).filter(([k, c]) => !(columns as readonly string[]).includes(k) && (c.defaultFn || c.onUpdateFn));
  if (computed.length) throw new Error(`compiledInsert ${name}: ${computed.map(([k]) => k).join(", ")} must be given (their defaults are computed by drizzle, not the database)`);
  const statement = kept<T["$inferSelect"][]>(
    name,
    () => {
      // A placeholder inside `sql` is sent as given; the encoders run below, where null can pass.
      const values = Object.fromEntries(set.map(([k]) => [k, sql`${sql.placeholder(k)}`])) as PgInsertValue<T>;
      const insert: SQLWrapper = statementWriter.insert(table).values(values).returning();
      return dialect.sqlToQuery(insert.getSQL());
    },
    // drizzle's own shape of a selection: each column with its path in the row it makes.
    Object.entries(all).map(([k, field]) => ({ path: [k], field })),
  );
  const run = (db: Db, row: Required<Pick<T["$inferInsert"], K>>) => {
    const values: Record<string, unknown> = {};
    for (const [k, column] of set) {
      const v = row[k];
      values[k] = v == null ? null : column.mapToDriverValue(v);
    }
    return statement(db, values);
  };
  return Object.assign(run, { query: statement.query });
}

/**
 * Rows of a raw `db.execute`: PGlite answers `{ rows }`, postgres.js an array. An unchecked
 * cast: a statement that names its columns with `selectAs` reads them with `rowsAs` instead.
 */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

/**
 * The select list (or RETURNING list) of a raw statement, as output names to what each one is:
 * a column of the schema (through its table or an `alias()` of it, which it is written with),
 * or an expression with its type beside it (`sql<boolean>\`…\``: what the driver answers for
 * it, written by hand, since no column gives it). `RawRow` types the rows it makes from the
 * schema, so renaming or retyping a column fails the typecheck where its rows are read.
 */
export type RawColumns = Record<string, Column | SQL<unknown>>;

/** A 64-bit integer as the drivers answer it raw: postgres.js as text, PGlite as a number (a bigint beyond 2^53). */
export type RawBigint = string | number | bigint;

/** Column types whose arrays both drivers parse into arrays of what `data` says (known of a table's own column: an `alias()` keeps no element type). */
type ParsedArrayOf = "PgText" | "PgVarchar" | "PgChar" | "PgUUID" | "PgInteger" | "PgSmallInt" | "PgBoolean" | "PgReal" | "PgDoublePrecision";

/**
 * What postgres.js and PGlite answer, under drizzle's parsers (which leave every date and time
 * type as text), for a column of this type in a raw statement's row, before drizzle maps it:
 * a `timestamp` is not a Date here (it may come as text), a `bigint` not a number, a custom
 * type its driver's data. A type not listed is `unknown`, so its reader must say what it takes.
 */
type RawOfType<T extends Column["_"]> = T["columnType"] extends "PgText" | "PgVarchar" | "PgChar" | "PgUUID" | "PgEnumColumn" | "PgEnumObjectColumn"
  ? T["data"]
  : T["columnType"] extends "PgInteger" | "PgSmallInt" | "PgSerial" | "PgSmallSerial" | "PgReal" | "PgDoublePrecision"
    ? number
    : T["columnType"] extends "PgBoolean"
      ? boolean
      : T["columnType"] extends "PgTimestamp" | "PgTimestampString" | "PgDate" | "PgDateString"
        ? string | Date
        : T["columnType"] extends "PgTime" | "PgInterval"
          ? string
          : T["columnType"] extends "PgBigInt53" | "PgBigInt64" | "PgBigSerial53" | "PgBigSerial64"
            ? RawBigint
            : T["columnType"] extends "PgNumeric" | "PgNumericNumber" | "PgNumericBigInt"
              ? string | number
              : T["columnType"] extends "PgJson" | "PgJsonb"
                ? T["data"]
                : T["columnType"] extends "PgCustomColumn"
                  ? T["driverParam"]
                  : T["columnType"] extends "PgArray"
                    ? T extends { baseBuilder: { _: { columnType: ParsedArrayOf } } }
                      ? T["data"]
                      : unknown
                    : unknown;

/** What one entry of `RawColumns` comes as in a raw row: a nullable column's value includes null. */
export type RawValue<C> = C extends SQL<infer T> ? T : C extends Column ? RawOfType<C["_"]> | (C["_"]["notNull"] extends true ? never : null) : never;

/** A raw statement's row, as its `selectAs(cols)` list makes it. */
export type RawRow<C extends RawColumns> = { [K in keyof C]: RawValue<C[K]> };

/** A row's values where they may all be null: the columns of a LEFT JOIN's table. */
export type Nullable<R> = { [K in keyof R]: R[K] | null };

const OUTPUT_NAME = /^[a-z_][a-z0-9_]*$/;

function outputName(name: string): SQL {
  // Written as it is, as the statements wrote their names by hand: only plain lower-case names, which need no quotes.
  if (!OUTPUT_NAME.test(name)) throw new Error(`selectAs: ${JSON.stringify(name)} is not a plain lower-case name`);
  return sql.raw(name);
}

/**
 * `cols` as a select (or RETURNING) list, `<column or expression> as <name>, …`: each column as
 * drizzle writes it in SQL, qualified by its table or alias (`"d"."id" as id`). Build it once
 * beside the statement; it costs nothing per row.
 */
export function selectAs(cols: RawColumns): SQL {
  return sql.join(
    Object.entries(cols).map(([name, c]) => sql`${c} as ${outputName(name)}`),
    sql`, `,
  );
}

/** The rows of a raw statement whose select list is `selectAs(cols)`, typed from the schema (the same cast as `rowsOf`). */
export function rowsAs<C extends RawColumns>(_cols: C, result: unknown): RawRow<C>[] {
  return rowsOf<RawRow<C>>(result);
}

/**
 * The columns of a CTE or subquery `name` whose select list was `selectAs(cols)`, to be named
 * in an outer select as `name.<column>` (`columnsOf("c", cols).id` is `c.id`), each typed as it
 * came out of it.
 */
export function columnsOf<C extends RawColumns>(name: string, cols: C): { [K in keyof C]: SQL<RawValue<C[K]>> } {
  const from = outputName(name);
  return Object.fromEntries(Object.keys(cols).map((k) => [k, sql`${from}.${outputName(k)}`])) as { [K in keyof C]: SQL<RawValue<C[K]>> };
}

/** `cols` as the columns of a LEFT JOIN's table: the same SQL, each value's type with null. */
export function orNull<C extends RawColumns>(cols: C): { [K in keyof C]: SQL<RawValue<C[K]> | null> } {
  return Object.fromEntries(Object.entries(cols).map(([k, c]) => [k, sql`${c}`])) as { [K in keyof C]: SQL<RawValue<C[K]> | null> };
}

/**
 * A database instant (microseconds) as the first millisecond not before it: a wake-up set
 * for a truncated instant would come a fraction early and find nothing due.
 */
export function notBefore(v: string | Date): Date {
  return new Date(new Date(v).getTime() + 1);
}
