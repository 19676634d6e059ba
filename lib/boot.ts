import "server-only";
import { assertSecretsKeyOpensStored } from "./crypto/sealed-at-rest";
import { checkDatabaseAtOpen, errorCode, getDbHandle, isStartRefused, onDatabaseRefused } from "./db/client";
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

/** Waits between boot's attempts to open a database that cannot be reached yet: 1 s, doubling, at most 30 s. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/** boot's timers (the next attempt, housekeeping), on globalThis as Next.js may load this module twice. */
const timers = ((globalThis as unknown as { __aasBoot?: { retry?: NodeJS.Timeout; housekeeping?: NodeJS.Timeout } }).__aasBoot ??= {});

/**
 * Start-up: apply migrations, seed the demo world when asked (and keep one that is there at this
 * base URL), and keep housekeeping running.
 * A database that is down at start (connection refused, a timeout, a host not yet resolvable)
 * is retried in the background, by boot itself (1 s, doubling to 30 s) as well as by whatever
 * uses it; requests answer 503 meanwhile, and the demo world and housekeeping start once it
 * opens. One that refuses the service and that waiting cannot change (`DatabaseRefused`: no
 * such database, a role or password refused, a DATA_DIR it cannot write, a migration that fails,
 * a database a newer release migrated, a SECRETS_KEY that cannot open the secrets it holds
 * sealed; `DirectoryInUse`: another process has the embedded database open, and serving would
 * lose writes) stops it, here or at whichever later attempt first meets it, as long as the
 * database has never been opened.
 * Webhook delivery is started by the process entry (instrumentation.ts), which picks the runner.
 */
export async function boot(): Promise<void> {
  onDatabaseRefused(stop);
  // A SECRETS_KEY that cannot open the stored secrets would fail every token request and
  // delivery at first use: found at start instead, at whichever attempt first opens the database.
  checkDatabaseAtOpen(assertSecretsKeyOpensStored);
  stopBoot();
  await attempt(0);
}

/** Ends boot's retries and housekeeping (tests; a stopping process needs nothing of it: both timers are unref'd). */
export function stopBoot(): void {
  clearTimeout(timers.retry);
  clearInterval(timers.housekeeping);
  timers.retry = timers.housekeeping = undefined;
}

async function attempt(failures: number): Promise<void> {
  timers.retry = undefined;
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
    timers.housekeeping = setInterval(() => {
      pruneRateLimitCounters(db).catch((e: unknown) => log.warn("pruning counters failed", errorFields(e)));
      pruneIdempotencyKeys(db).catch((e: unknown) => log.warn("pruning idempotency keys failed", errorFields(e)));
      pruneConsoleSessions(db).catch((e: unknown) => log.warn("pruning console sessions failed", errorFields(e)));
    }, 3_600_000);
    timers.housekeeping.unref();
    if (failures > 0) log.info("start-up completed", { attempts: failures + 1 });
  } catch (err) {
    // Stopped already by the handler above (onDatabaseRefused).
    if (isStartRefused(err)) return;
    const wait = Math.min(RETRY_FIRST_MS * 2 ** failures, RETRY_MAX_MS);
    if (failures === 0) log.error("start-up failed; the service answers 503 until the database is reachable", { ...errorFields(err), retry_in_ms: wait });
    else log.debug("start-up still waiting for the database", { ...errorFields(err), retry_in_ms: wait });
    timers.retry = setTimeout(() => void attempt(failures + 1), wait);
    timers.retry.unref();
  }
}
