import "server-only";
import { getDbHandle } from "./db/client";
import { DirectoryInUse } from "./db/directory-lock";
import { demoWorldAtStart, SeedRefused } from "./db/seed";
import { getEnv } from "./env";
import { log } from "./log";
import { pruneIdempotencyKeys } from "./http/idempotency";
import { pruneRateLimitCounters } from "./http/rate-limit";
import { pruneConsoleSessions } from "./auth/console-sessions";

/**
 * Start-up: apply migrations, seed the demo world when asked (and keep one that is there at this
 * base URL), and keep housekeeping running.
 * A database that is down at start is retried in the background; requests answer 503 meanwhile.
 * Webhook delivery is started by the process entry (instrumentation.ts), which picks the runner.
 */
export async function boot(): Promise<void> {
  const env = getEnv();
  try {
    const { db } = await getDbHandle();
    try {
      const result = await demoWorldAtStart(db, { seed: env.seedDemo, baseUrl: env.baseUrl });
      if (result !== "absent") log.info(result === "seeded" ? "demo world seeded" : "demo world present");
    } catch (err) {
      if (err instanceof SeedRefused) log.warn("demo world not seeded", { reason: err.message });
      else throw err;
    }
    const timer = setInterval(() => {
      pruneRateLimitCounters(db).catch((e: unknown) => log.warn("pruning counters failed", { error: String(e) }));
      pruneIdempotencyKeys(db).catch((e: unknown) => log.warn("pruning idempotency keys failed", { error: String(e) }));
      pruneConsoleSessions(db).catch((e: unknown) => log.warn("pruning console sessions failed", { error: String(e) }));
    }, 3_600_000);
    timer.unref();
  } catch (err) {
    // Another process has the embedded database open: waiting would not change that, and
    // serving would lose writes. The service stops, saying which process holds it.
    if (err instanceof DirectoryInUse) {
      console.error(err.message);
      process.exit(1);
    }
    log.error("start-up failed; the service answers 503 until the database is reachable", { error: String(err) });
  }
}
