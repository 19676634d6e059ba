import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { openDatabase, setDbHandleForTests, type DbHandle } from "../db/client";
import { resetKeyCacheForTests } from "../oauth/keys";

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
  const admin = postgres(base, { max: 1, onnotice: () => {} });
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
