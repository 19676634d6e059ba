// A dedicated PostgreSQL database for the benchmarks: created, migrated with the repository's
// own migrations, and seeded once; later runs reuse it when the seed still matches.
import path from "node:path";
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { postgresConnection } from "../../lib/db/postgres-url";
import { REPO_ROOT } from "./paths";

export type Sql = postgres.Sql;

export const PG_SERVER_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432";
export const BENCH_DB = process.env.BENCH_DB ?? "aas_bench";

export function databaseUrl(name = BENCH_DB): string {
  return `${PG_SERVER_URL}/${name}`;
}

/** A connection as the service opens one, libpq's socket forms included (lib/db/postgres-url.ts). */
export function connect(url: string, max = 1): Sql {
  const { url: pgUrl, options } = postgresConnection(url);
  return postgres(pgUrl, { ...options, max, onnotice: () => {}, connect_timeout: 5 });
}

/** Creates the database when it is missing; with `fresh`, drops it first (closing its sessions). */
export async function ensureDatabase(name: string, { fresh }: { fresh: boolean }): Promise<void> {
  const admin = connect(databaseUrl("postgres"));
  try {
    if (fresh) await admin.unsafe(`drop database if exists "${name}" with (force)`);
    const [row] = await admin`select 1 as one from pg_database where datname = ${name}`;
    if (!row) await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
}

/** Applies drizzle/ the way the service does at start. */
export async function migrateDatabase(url: string): Promise<void> {
  const sql = connect(url);
  try {
    await migrate(drizzle({ client: sql }), { migrationsFolder: path.join(REPO_ROOT, "drizzle") });
  } finally {
    await sql.end();
  }
}

/**
 * A small key/value table the benchmarks own, recording what a database was seeded with, so a
 * later run can tell whether the rows it needs are already there.
 */
async function ensureSeedTable(sql: Sql): Promise<void> {
  await sql`create table if not exists bench_seed (key text primary key, spec jsonb not null, seeded_at timestamptz not null default now())`;
}

export async function readSeedMark(sql: Sql, key: string): Promise<unknown> {
  await ensureSeedTable(sql);
  const [row] = await sql<{ spec: unknown }[]>`select spec from bench_seed where key = ${key}`;
  return row?.spec;
}

export async function writeSeedMark(sql: Sql, key: string, spec: unknown): Promise<void> {
  await ensureSeedTable(sql);
  await sql`
    insert into bench_seed (key, spec) values (${key}, ${sql.json(spec as postgres.JSONValue)})
    on conflict (key) do update set spec = excluded.spec, seeded_at = now()`;
}
