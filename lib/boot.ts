import "server-only";
import { assertSecretsKeyOpensStored } from "./crypto/sealed-at-rest";
import { checkDatabaseAtOpen, errorCode, getDbHandle, isStartRefused, onDatabaseOpened, onDatabaseRefused, type Db } from "./db/client";
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

/** Waits between boot's attempts (to open a database that cannot be reached yet, or to seed): 1 s, doubling, at most 30 s. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;
const backoff = (failures: number) => {
  const first = state.retryFirstMs ?? RETRY_FIRST_MS;
  return Math.min(first * 2 ** failures, Math.max(first, RETRY_MAX_MS));
};

/**
 * boot's state, on globalThis as Next.js may load this module twice: which start is current
 * (`generation`: an attempt of an earlier one, still awaiting when stopBoot ran, does nothing
 * more), the one attempt running, whether the database has been opened, and the timers.
 */
type BootState = { generation: number; running?: number; opened?: boolean; retry?: NodeJS.Timeout; housekeeping?: NodeJS.Timeout; retryFirstMs?: number };
const state = ((globalThis as unknown as { __aasBoot?: BootState }).__aasBoot ??= { generation: 0 });

/**
 * Start-up: apply migrations, seed the demo world when asked (and keep one that is there at this
 * base URL), and keep housekeeping running.
 * A database that is down at start (connection refused, a timeout, a host not yet resolvable)
 * is retried in the background, by boot itself (1 s, doubling to 30 s) and by whatever uses it;
 * requests answer 503 meanwhile, and the demo world and housekeeping start as soon as it opens,
 * whoever opened it. One that refuses the service and that waiting cannot change
 * (`DatabaseRefused`: no such database, a role or password refused, a DATA_DIR it cannot write,
 * a migration that fails, a database a newer release migrated, a SECRETS_KEY that cannot open
 * the secrets it holds sealed; `DirectoryInUse`: another process has the embedded database
 * open, and serving would lose writes) stops it, here or at whichever later attempt first meets
 * it, as long as the database has never been opened.
 * Webhook delivery is started by the process entry (instrumentation.ts), which picks the runner.
 */
export async function boot({ retryFirstMs }: { retryFirstMs?: number } = {}): Promise<void> {
  stopBoot();
  // Tests lengthen the wait, to see what starts without boot's own retry.
  state.retryFirstMs = retryFirstMs;
  const generation = state.generation;
  onDatabaseRefused(stop);
  // A SECRETS_KEY that cannot open the stored secrets would fail every token request and
  // delivery at first use: found at start instead, at whichever attempt first opens the database.
  checkDatabaseAtOpen(assertSecretsKeyOpensStored);
  // Opened by a request or a runner before boot's next attempt: go on at once, so the demo world
  // is seeded before anyone can sign up into the empty database.
  onDatabaseOpened(() => void attempt(generation, 0));
  await attempt(generation, 0);
}

/** Ends boot's retries and housekeeping, and any attempt under way does nothing more (tests; a stopping process). */
export function stopBoot(): void {
  state.generation++;
  state.running = undefined;
  state.opened = false;
  clearTimeout(state.retry);
  clearInterval(state.housekeeping);
  state.retry = state.housekeeping = undefined;
  onDatabaseOpened(undefined);
}

async function attempt(generation: number, failures: number): Promise<void> {
  if (state.generation !== generation || state.running === generation || state.opened) return;
  state.running = generation;
  clearTimeout(state.retry);
  state.retry = undefined;
  try {
    const { db } = await getDbHandle();
    if (state.generation !== generation) return;
    state.opened = true;
    state.housekeeping = setInterval(() => {
      pruneRateLimitCounters(db).catch((e: unknown) => log.warn("pruning counters failed", errorFields(e)));
      pruneIdempotencyKeys(db).catch((e: unknown) => log.warn("pruning idempotency keys failed", errorFields(e)));
      pruneConsoleSessions(db).catch((e: unknown) => log.warn("pruning console sessions failed", errorFields(e)));
    }, 3_600_000);
    state.housekeeping.unref();
    if (failures > 0) log.info("database opened after waiting for it", { attempts: failures + 1 });
    await seed(generation, db, 0);
  } catch (err) {
    // Stopped already by the handler above (onDatabaseRefused).
    if (isStartRefused(err) || state.generation !== generation) return;
    const wait = backoff(failures);
    if (failures === 0) log.error("start-up failed; the service answers 503 until the database is reachable", { ...errorFields(err), retry_in_ms: wait });
    else log.debug("start-up still waiting for the database", { ...errorFields(err), retry_in_ms: wait });
    state.retry = setTimeout(() => void attempt(generation, failures + 1), wait);
    state.retry.unref();
  } finally {
    if (state.running === generation) state.running = undefined;
  }
}

/** The demo world, when asked for (or kept at this base URL when there); a failure other than a refusal is tried again. */
async function seed(generation: number, db: Db, failures: number): Promise<void> {
  if (state.generation !== generation) return;
  const env = getEnv();
  try {
    const result = await demoWorldAtStart(db, { seed: env.seedDemo, baseUrl: env.baseUrl });
    if (result !== "absent") log.info(result === "seeded" ? "demo world seeded" : "demo world present");
  } catch (err) {
    if (err instanceof SeedRefused) return log.warn("demo world not seeded", { reason: err.message });
    if (state.generation !== generation) return;
    const wait = backoff(failures);
    (failures === 0 ? log.error : log.debug)("demo world not seeded yet; trying again", { ...errorFields(err), retry_in_ms: wait });
    state.retry = setTimeout(() => void seed(generation, db, failures + 1), wait);
    state.retry.unref();
  }
}
