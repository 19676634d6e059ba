import "server-only";
import { assertSecretsKeyOpensStored } from "./crypto/sealed-at-rest";
import { checkDatabaseAtOpen, DatabaseRefused, errorCode, getDbHandle, onDatabaseRefused } from "./db/client";
import { DirectoryInUse } from "./db/directory-lock";
import { demoWorldAtStart, SeedRefused } from "./db/seed";
import { getEnv } from "./env";
import { log } from "./log";
import { pruneIdempotencyKeys } from "./http/idempotency";
import { pruneRateLimitCounters } from "./http/rate-limit";
import { pruneConsoleSessions } from "./auth/console-sessions";

/** An error as log fields: its message and code, not String(err) (a minified class name before the message). */
function errorFields(err: unknown): { error: string; code?: string } {
  const code = errorCode(err);
  return { error: err instanceof Error ? err.message : String(err), ...(code ? { code } : {}) };
}

/** The service stops, saying why in one sentence for a person (the setting to change, what to do). */
function stop(err: Error): void {
  console.error(err.message);
  process.exit(1);
}

/**
 * Start-up: apply migrations, seed the demo world when asked (and keep one that is there at this
 * base URL), and keep housekeeping running.
 * A database that is down at start (connection refused, a timeout, a host not yet resolvable)
 * is retried in the background; requests answer 503 meanwhile. One that refuses the service
 * and that waiting cannot change (`DatabaseRefused`: no such database, a role or password
 * refused, a DATA_DIR it cannot write, a migration that fails, a database a newer release
 * migrated, a SECRETS_KEY that cannot open the secrets it holds sealed) stops it, here or at whichever later attempt first meets it, as long as the
 * database has never been opened.
 * Webhook delivery is started by the process entry (instrumentation.ts), which picks the runner.
 */
export async function boot(): Promise<void> {
  const env = getEnv();
  onDatabaseRefused(stop);
  // A SECRETS_KEY that cannot open the stored secrets would fail every token request and
  // delivery at first use: found at start instead, at whichever attempt first opens the database.
  checkDatabaseAtOpen(assertSecretsKeyOpensStored);
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
      pruneRateLimitCounters(db).catch((e: unknown) => log.warn("pruning counters failed", errorFields(e)));
      pruneIdempotencyKeys(db).catch((e: unknown) => log.warn("pruning idempotency keys failed", errorFields(e)));
      pruneConsoleSessions(db).catch((e: unknown) => log.warn("pruning console sessions failed", errorFields(e)));
    }, 3_600_000);
    timer.unref();
  } catch (err) {
    // Another process has the embedded database open: waiting would not change that, and
    // serving would lose writes. The service stops, saying which process holds it.
    if (err instanceof DirectoryInUse || err instanceof DatabaseRefused) {
      // getDbHandle has already stopped the process on a DatabaseRefused; said once either way.
      if (err instanceof DirectoryInUse) stop(err);
      return;
    }
    log.error("start-up failed; the service answers 503 until the database is reachable", errorFields(err));
  }
}
