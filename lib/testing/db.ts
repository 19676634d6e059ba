import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll } from "vitest";
import { openDatabase, setDbHandleForTests, type Db, type DbHandle } from "../db/client";
import { postgresConnection } from "../db/postgres-url";
import { resetKeyCacheForTests } from "../oauth/keys";

/** One connection to the TEST_DATABASE_URL server, to create and drop the tests' databases. */
function adminConnection(base: string) {
  const { url, options } = postgresConnection(base);
  return postgres(url, { ...options, max: 1, onnotice: () => {} });
}

/**
 * A fresh, migrated database for one test file: in-memory PGlite by default, or a new
 * database on the PostgreSQL server named by TEST_DATABASE_URL (dropped afterwards).
 */
export async function createTestDatabase(): Promise<DbHandle & { drop: () => Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL;
  resetKeyCacheForTests();
  if (!base) {
    const handle = await openDatabase({});
    setDbHandleForTests(handle);
    return { ...handle, drop: () => handle.close() };
  }
  const name = `aas_test_${randomBytes(6).toString("hex")}`;
  const admin = adminConnection(base);
  await admin.unsafe(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ url: url.toString(), max: 5 });
  setDbHandleForTests(handle);
  return {
    ...handle,
    drop: async () => {
      await handle.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/**
 * A database a child process opens too (the kill-and-restart tests): an embedded one in a
 * directory both can open one after the other, or a new database on the TEST_DATABASE_URL
 * server. `env` tells the child where it is (CHILD_DATA_DIR or CHILD_DATABASE_URL); `open` opens
 * it in this process; `cleanup` removes it.
 */
export async function createChildDatabase(prefix: string): Promise<{
  env: Record<string, string>;
  open: () => ReturnType<typeof openDatabase>;
  cleanup: () => Promise<void>;
}> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) {
    const dir = mkdtempSync(path.join(tmpdir(), prefix));
    return { env: { CHILD_DATA_DIR: dir }, open: () => openDatabase({ dataDir: dir }), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `aas_test_${randomBytes(6).toString("hex")}`;
  const admin = adminConnection(base);
  await admin.unsafe(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    env: { CHILD_DATABASE_URL: url.toString() },
    open: () => openDatabase({ url: url.toString(), max: 2 }),
    cleanup: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/**
 * A fresh test database (createTestDatabase) for the test file, or the describe block, this is
 * called in: opened before its tests and handed to `opened` (which keeps it, and may seed it),
 * dropped after them.
 */
export function setupTestDatabase(opened: (db: Db) => void | Promise<void>): void {
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const handle = await createTestDatabase();
    drop = handle.drop;
    await opened(handle.db);
  });
  afterAll(async () => drop?.());
}
