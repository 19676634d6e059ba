import "server-only";
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
    max: opts.max ?? 10,
    onnotice: () => {},
    connect_timeout: 5,
    idle_timeout: 60,
  });
  const db = drizzle({ client, schema });
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

/** Rows of a raw `db.execute`: PGlite answers `{ rows }`, postgres.js an array. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}
