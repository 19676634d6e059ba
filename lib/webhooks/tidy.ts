import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { events, webhookDeliveries } from "../db/schema";
import { log } from "../log";

/** Attempts recorded between two vacuums of the delivery path's tables, at most. */
export const TIDY_EVERY_ATTEMPTS = 2_000;
/** The least time between two of them. */
export const TIDY_MIN_INTERVAL_MS = 2_000;

/**
 * Every delivery leaves row versions behind: its claim and its record each update its row, and
 * neither update can stay on the page (HOT), since both change columns of the pending indexes;
 * fan-out marks each event the same way. Until a vacuum removes them, every claim walks past
 * them in the pending indexes, and the runner slows with each burst (measured: 2,000 deliveries/s
 * after the first 13,000 of a burst, 1,400 after 39,000; 1,800 to 3,300 with vacuums every few
 * seconds). Autovacuum looks at a database once a minute at most (`autovacuum_naptime`), so the
 * runner that made the dead versions asks for the vacuum itself, every TIDY_EVERY_ATTEMPTS
 * attempts. It runs beside the loop, never two at once, skips a table another session holds,
 * and on a big table PostgreSQL leaves the indexes alone while the dead versions are few, so its
 * cost follows what changed. A failure (say, a role that does not own the tables) is logged once
 * and the runner stops asking: autovacuum still runs.
 */
export function deliveryTidier(opts: { everyAttempts?: number; minIntervalMs?: number } = {}) {
  const every = opts.everyAttempts ?? TIDY_EVERY_ATTEMPTS;
  const minInterval = opts.minIntervalMs ?? TIDY_MIN_INTERVAL_MS;
  let attempts = 0;
  let last = -Infinity;
  let running: Promise<void> | undefined;
  let disabled = false;
  return {
    /** One attempt recorded; may start a vacuum, which the returned promise (if any) is. */
    recorded(db: Db): Promise<void> | undefined {
      attempts++;
      if (disabled || running || attempts < every || Date.now() - last < minInterval) return undefined;
      attempts = 0;
      last = Date.now();
      running = vacuumDeliveryTables(db)
        .catch((err: unknown) => {
          disabled = true;
          log.warn("webhook runner cannot vacuum its tables; leaving it to autovacuum", { error: String(err) });
        })
        .finally(() => (running = undefined));
      return running;
    },
    /** Until the vacuum under way (if any) ends. */
    settled: () => running ?? Promise.resolve(),
  };
}

/** VACUUM of the tables the delivery path updates (outside any transaction, as VACUUM must be). */
export async function vacuumDeliveryTables(db: Db): Promise<void> {
  await db.execute(sql`vacuum (skip_locked) ${webhookDeliveries}, ${events}`);
}
