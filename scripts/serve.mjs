#!/usr/bin/env node
// Serves a built Next.js app the way `npm start` runs the service: scripts/server.mjs (Next.js's
// own request handler, as `next start` runs it, behind a node:http server that passes the
// socket's peer address on), one process per core when the app may run several (node:cluster,
// the workers sharing one listening socket).
// `npm start` (scripts/start.mjs) calls this for the service; `npm run bench` calls it for the
// service and for its bare baseline app, so both are measured under the same launcher.
//
//   node scripts/serve.mjs [<app dir>] [server options: -p PORT -H HOST]
//
// Workers: WEB_CONCURRENCY if set; otherwise one per core with DATABASE_URL (less one when the
// PostgreSQL server runs on this machine), and one without it (embedded PGlite in DATA_DIR can
// be opened by one process only). With one worker there is
// no cluster: the launcher runs scripts/server.mjs as its child. Why several: see the
// "Start configuration" section of bench/README.md. Node options given to this launcher
// (`node --inspect scripts/serve.mjs`, say) are passed on to every server process.
import cluster from "node:cluster";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readSecretsFile, writeSecretsFile } from "./secrets-file.mjs";
import os from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const serverScript = path.join(root, "scripts", "server.mjs");
/**
 * How long a stop (SIGINT/SIGTERM) may take: a server process still running then is killed, and
 * the launcher exits 1. scripts/server.mjs ends its own stop within its GRACE_MS, less than this;
 * this bound holds when it cannot (its thread held by the work it is stopping).
 */
export const STOP_BOUND_MS = 10_000;

/** How many server processes to run, and why (printed). */
export function workerPlan(env = process.env, { service = true } = {}) {
  if (env.WEB_CONCURRENCY) {
    // Plain decimal digits, as lib/env.ts reads every number: Number() would also take 0x2, 1e0 and " 2 ".
    const n = /^\d{1,15}$/.test(env.WEB_CONCURRENCY) ? Number(env.WEB_CONCURRENCY) : NaN;
    if (!(n >= 1)) throw new Error(`WEB_CONCURRENCY must be a positive whole number in decimal digits (0-9), not "${env.WEB_CONCURRENCY}"`);
    if (n > 1 && service && !env.DATABASE_URL) {
      throw new Error("WEB_CONCURRENCY above 1 needs DATABASE_URL: the embedded database can be opened by one process only");
    }
    return { workers: n, reason: "WEB_CONCURRENCY" };
  }
  if (service && !env.DATABASE_URL) return { workers: 1, reason: "embedded database: one process" };
  const cores = os.availableParallelism();
  if (env.DATABASE_URL && databaseIsLocal(env.DATABASE_URL)) {
    // The PostgreSQL server shares these cores: a worker on every core leaves it none, and the
    // requests queue behind it (bench/README.md, "Start configuration": on 2 cores, p99 at
    // half load doubled while the peak rose little).
    const workers = Math.max(1, cores - 1);
    return { workers, reason: `one per core less one for the PostgreSQL server on this machine (${cores} cores)` };
  }
  return { workers: cores, reason: `one per core (${cores})` };
}

/** Whether a PostgreSQL URL names a server on this machine (loopback, or a Unix socket). */
export function databaseIsLocal(url) {
  let u;
  try {
    // A user with no host (libpq's `postgres://user@/db?host=/dir`, which lib/db/postgres-url.ts
    // opens) is no URL to WHATWG's parser: who connects does not change where to.
    u = new URL(url.replace(/^(postgres(?:ql)?:\/\/)[^@/?#]*@(?=[/?#]|$)/i, "$1"));
  } catch {
    return false;
  }
  const socketDir = u.searchParams.get("host");
  if (socketDir?.startsWith("/")) return true;
  // A socket's directory in place of the host, percent-encoded (libpq's form; lib/db/postgres-url.ts).
  if (/^%2F/i.test(u.hostname)) return true;
  const host = u.hostname.replace(/^\[|\]$/g, "");
  return host === "" || host === "localhost" || host === "::1" || host.startsWith("127.");
}

/**
 * DATA_DIR as the absolute path every server process is given. A relative DATA_DIR is what the
 * person who started the launcher meant from where they started it: resolved against the
 * launcher's working directory, once, since the server processes run in the app's directory
 * (the database and the secrets the launcher generates would otherwise be in two places).
 * Unset, it is the app's own `.data` (where `npm start` and `npm run dev`, run in the app's
 * directory, have always kept it), whatever directory a service manager starts the launcher in.
 */
export function resolveDataDir(env, appDir, cwd = process.cwd()) {
  return env.DATA_DIR ? path.resolve(cwd, env.DATA_DIR) : path.join(path.resolve(appDir), ".data");
}

/**
 * Secrets the service generates into DATA_DIR/secrets.json when the operator gave none
 * (lib/secrets.ts) are generated here, once, before the server starts (one process or several):
 * workers starting together would otherwise each generate and write their own, and sign
 * sessions with different keys. The file is read and written as lib/secrets.ts does (scripts/secrets-file.mjs).
 */
export function ensureGeneratedSecrets(env) {
  const wanted = ["AUTH_SECRET", "SECRETS_KEY"].filter((name) => !env[name]);
  if (wanted.length === 0) return;
  // serve() passes DATA_DIR resolved (resolveDataDir); the default is only for a direct call.
  const file = path.resolve(env.DATA_DIR || "./.data", "secrets.json");
  const secrets = readSecretsFile(file);
  const missing = wanted.filter((name) => !secrets[name]);
  if (missing.length === 0) return;
  for (const name of missing) secrets[name] = randomBytes(32).toString("base64url");
  writeSecretsFile(file, secrets);
}

/**
 * Starts serving `appDir` with `nextArgs` (e.g. ["-p", "3000"]). Resolves once every worker
 * listens; the process exits when the server does (or on SIGINT/SIGTERM, after the workers).
 */
export async function serve({ appDir, nextArgs, env = process.env, log = console.log }) {
  env = { ...env, DATA_DIR: resolveDataDir(env, appDir) };
  const service = path.resolve(appDir) === root;
  const { workers, reason } = workerPlan(env, { service });
  const args = [appDir, ...nextArgs];
  if (service) ensureGeneratedSecrets(env);
  if (workers === 1) {
    const child = spawn(process.execPath, [...process.execArgv, serverScript, ...args], { cwd: appDir, env, stdio: "inherit" });
    let stopping = false;
    for (const sig of ["SIGINT", "SIGTERM"]) {
      process.on(sig, () => {
        // A second signal is passed on too: the server then stops at once.
        child.kill(sig);
        if (stopping) return;
        stopping = true;
        setTimeout(() => {
          child.kill("SIGKILL");
          process.exit(1);
        }, STOP_BOUND_MS).unref();
      });
    }
    child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
    return;
  }

  log(`  Serving with ${workers} worker processes (${reason}); set WEB_CONCURRENCY to change`);
  cluster.setupPrimary({ exec: serverScript, args, cwd: appDir, silent: false, execArgv: process.execArgv });
  let stopping = false;
  let restarts = 0;
  // Only the first worker seeds the demo world (when asked): two seeding one empty database
  // at once would collide. Migrations take an advisory lock, the signing key tolerates a race
  // (lib/oauth/keys.ts) and webhook runners claim work with SKIP LOCKED, so those may overlap.
  let forked = 0;
  const fork = () => cluster.fork(forked++ === 0 ? env : { ...env, SEED_DEMO: "false" });
  const listening = (worker) =>
    new Promise((resolve, reject) => {
      worker.once("listening", resolve);
      worker.once("exit", (code, signal) => reject(new Error(`worker exited before listening (${signal ?? `exit ${code}`})`)));
    });
  // The first worker alone first, so the others find the database migrated and usually seeded.
  try {
    await listening(fork());
    await Promise.all(Array.from({ length: workers - 1 }, () => listening(fork())));
    log(`  ${workers} workers listening`);
  } catch (err) {
    log(`  ${err.message}; stopping`);
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill("SIGTERM");
    process.exit(1);
  }
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    // A crashed worker is replaced; one that keeps crashing stops the service.
    if (++restarts > workers * 5) {
      log(`  worker ${worker.process.pid} exited (${signal ?? `exit ${code}`}); too many restarts, stopping`);
      process.exit(1);
    }
    log(`  worker ${worker.process.pid} exited (${signal ?? `exit ${code}`}); starting another`);
    fork();
  });
  const restartBudget = setInterval(() => (restarts = 0), 60_000);
  restartBudget.unref();
  for (const sig of ["SIGINT", "SIGTERM"]) {
    process.on(sig, () => {
      if (stopping) return;
      stopping = true;
      const alive = Object.values(cluster.workers ?? {});
      if (alive.length === 0) process.exit(0);
      for (const w of alive) w?.process.kill(sig);
      setTimeout(() => {
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill("SIGKILL");
        process.exit(1);
      }, STOP_BOUND_MS).unref();
    });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [first, ...rest] = process.argv.slice(2);
  const appDir = first && !first.startsWith("-") ? path.resolve(first) : root;
  const nextArgs = first && !first.startsWith("-") ? rest : process.argv.slice(2);
  serve({ appDir, nextArgs, env: { NEXT_TELEMETRY_DISABLED: "1", ...process.env } }).catch((err) => {
    console.error(err.message);
    process.exit(1);
  });
}
