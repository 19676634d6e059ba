import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import * as schema from "./schema";
import { rowsOf, type Db } from "./client";
import { setupTestDatabase } from "../testing/db";

// A column added to lib/db/schema without its migration fails here, by name, rather than as a
// 500 in some route's test ("column … does not exist", seen only in the log).
let db: Db;
setupTestDatabase((opened) => {
  db = opened;
});

const tables = (Object.values(schema) as unknown[]).filter((v): v is PgTable => v instanceof PgTable).map((t) => getTableConfig(t));

describe("the schema and the migrations (drizzle/)", () => {
  it("has every table and column of lib/db/schema in the migrated database, of the same nullability", async () => {
    expect(tables.length).toBeGreaterThan(10);
    const rows = rowsOf<{ table_name: string; column_name: string; is_nullable: string }>(
      await db.execute(sql`select table_name, column_name, is_nullable from information_schema.columns where table_schema = 'public'`),
    );
    const migrated = new Map(rows.map((r) => [`${r.table_name}.${r.column_name}`, r.is_nullable === "YES"]));
    const problems: string[] = [];
    for (const t of tables) {
      for (const c of t.columns) {
        const key = `${t.name}.${c.name}`;
        if (!migrated.has(key)) problems.push(`${key}: in lib/db/schema, but no migration creates it (npm run db:generate)`);
        else if (migrated.get(key) !== !c.notNull) problems.push(`${key}: ${c.notNull ? "not null" : "nullable"} in lib/db/schema, the other way in the migrations`);
      }
    }
    expect(problems).toEqual([]);
  });
});
