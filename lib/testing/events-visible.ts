import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "../db/client";
import { events } from "../db/schema";
import { outboxHorizon } from "../app-events/outbox-horizon";

/**
 * Waits until every event written so far is listed by `/v1/app/events`, which reads only what
 * transactions older than every one of its database still running wrote (outboxHorizon). On
 * the test PostgreSQL server other test files' transactions run at the same time and hold that
 * horizon back for their few milliseconds; a test asking right after its own write waits for
 * them here, on the condition itself.
 */
export async function eventsVisible(db: Db, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = rowsOf<{ hidden: boolean }>(
      await db.execute(sql`select exists (select 1 from ${events} where ${events.xact} >= ${outboxHorizon}) as hidden`),
    );
    if (!row!.hidden) return;
    if (Date.now() > deadline) throw new Error(`events are still behind a running transaction after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
