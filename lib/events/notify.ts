import "server-only";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { WORK_CHANNEL } from "./channel";

/** What changed: `outbox`, an event appended; `queue`, deliveries queued or put back. */
export type Work = "outbox" | "queue";

/**
 * Inside a write's transaction: PostgreSQL delivers the notification only if and when the
 * transaction commits, so a listener never wakes for an event it cannot see yet.
 */
export async function notifyWork(tx: Db, work: Work = "queue"): Promise<void> {
  await tx.execute(sql`select pg_notify(${WORK_CHANNEL}, ${work})`);
}
