import { count, type SQL } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import { getDb } from "../db/client";
import { activities, events, idempotencyKeys, metrics } from "../db/schema";

/** Rows in `table` (matching `where`), read straight from the test database. */
export async function countRows(table: PgTable, where?: SQL): Promise<number> {
  const db = await getDb();
  const [row] = await db.select({ n: count() }).from(table).where(where);
  return Number(row?.n ?? 0);
}

/** What a write could have left behind; a refused write must leave every count unchanged. */
export async function writeCounts(): Promise<Record<"activities" | "metrics" | "events" | "idempotency_keys", number>> {
  return {
    activities: await countRows(activities),
    metrics: await countRows(metrics),
    events: await countRows(events),
    idempotency_keys: await countRows(idempotencyKeys),
  };
}
