import { sql } from "drizzle-orm";
import { rowsOf, type Db } from "../db/client";

/**
 * Waits (PostgreSQL, two connections) until a statement of this database waits on a lock, or
 * `settled()` says the work under test finished without waiting; throws if neither happens.
 * Polled every 10 ms: what it waits for is another connection's state, which sends no signal.
 */
export async function untilWaitingOnLock(db: Db, settled: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !settled(); i++) {
    const [w] = rowsOf<{ n: number }>(
      await db.execute(sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`),
    );
    if (w!.n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  if (!settled()) throw new Error(`${what} neither waited nor finished`);
}
