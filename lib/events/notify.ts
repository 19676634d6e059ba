import "server-only";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

/**
 * The channel on which committed writes announce work to every instance's runner: the outbox
 * (an event appended) and the delivery queue (deliveries queued or put back). The outbox owns
 * it; the runners listen on it (lib/webhooks/listen.ts).
 */
export const WORK_CHANNEL = "aas_webhooks";

/** What changed: `outbox`, an event appended; `queue`, deliveries queued or put back. */
export type Work = "outbox" | "queue";

/**
 * Inside a write's transaction: PostgreSQL delivers the notification only if and when the
 * transaction commits, so a listener never wakes for an event it cannot see yet.
 */
export async function notifyWork(tx: Db, work: Work = "queue"): Promise<void> {
  await tx.execute(sql`select pg_notify(${WORK_CHANNEL}, ${work})`);
}
