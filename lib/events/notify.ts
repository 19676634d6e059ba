import "server-only";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { afterCommit } from "../db/transaction";
import { WORK_CHANNEL } from "./channel";

/** What changed: `outbox`, an event appended; `queue`, deliveries queued or put back. */
export type Work = "outbox" | "queue";

/**
 * Tells the runners (LISTEN, every instance) that work exists, once the write's transaction has
 * committed (afterCommit), so a listener never wakes for an event it cannot see yet, and a
 * write that rolls back tells nobody. Sent after the commit, not inside the transaction:
 * PostgreSQL makes every transaction that notifies take one lock from just before its commit
 * until its commit record is on disk, so notifying writes commit one at a time, and one slow
 * disk flush holds every writer (16 writers: about half the commits per second; bench/README.md,
 * "Where the spikes at 100 events/s come from"). A notification alone writes nothing to disk.
 * If the process ends between the commit and the notification, the runners' poll finds the work.
 */
export async function notifyWork(tx: Db, work: Work = "queue"): Promise<void> {
  await afterCommit(tx, `notify ${work}`, (db) => db.execute(sql`select pg_notify(${WORK_CHANNEL}, ${work})`));
}
