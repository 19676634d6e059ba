// The two servers the scenarios compare: the service's production build over PostgreSQL, and a
// bare Next.js app whose route handlers do no work (GET /bare) or only sign a token (POST /sign).
// Both run the way `npm start` runs the service (scripts/serve.mjs, one worker per core over
// PostgreSQL) unless a mode is given; `BENCH_LAUNCHER=next-start` or `WEB_CONCURRENCY=N` in
// the bench's environment change the default for both, so configurations can be compared.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { CACHE_DIR, REPO_ROOT } from "./paths";
import { workerPlan } from "../../scripts/serve.mjs";
import { describeMode, ensureBuild, startNext, type BuildState, type NextServer, type ServeMode } from "./next-server";

const BASE_ENV: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" };

export type Started = { server: NextServer; build: BuildState; dir: string; mode: ServeMode; modeText: string };

/**
 * The mode `npm start` serves the service in over `databaseUrl`: its launcher with the workers
 * its plan gives (scripts/serve.mjs `workerPlan`; `WEB_CONCURRENCY` overrides it), unless the
 * bench's environment asks for plain `next start`.
 */
export function defaultServeMode(databaseUrl: string): ServeMode {
  if (process.env.BENCH_LAUNCHER === "next-start") return { launcher: "next-start", workers: 1 };
  return { launcher: "serve", workers: workerPlan({ ...process.env, DATABASE_URL: databaseUrl }).workers };
}

const launcherIn = (dir: string) => path.join(dir, "scripts", "serve.mjs");

/**
 * The service, its rate limits raised out of the way. It builds only when there is no build
 * (or with `rebuild`): others may be serving the shared `.next` folder, so a stale build is
 * reported rather than replaced.
 */
export async function startService(opts: {
  databaseUrl: string;
  rebuild: boolean;
  log: (s: string) => void;
  /** Another checkout to measure instead of this one. */
  dir?: string;
  /** Extra settings, e.g. NODE_OPTIONS for a profile. */
  env?: Record<string, string | undefined>;
  /** How to run it; `defaultServeMode()` unless told. */
  mode?: ServeMode;
  /** Every line the service writes. */
  onOutput?: (line: string) => void;
}): Promise<Started> {
  const dir = opts.dir ?? REPO_ROOT;
  let mode = opts.mode ?? defaultServeMode(opts.databaseUrl);
  if (mode.launcher === "serve" && !existsSync(launcherIn(dir))) {
    opts.log(`WARNING: ${dir} has no scripts/serve.mjs (an older checkout): measuring it under plain next start`);
    mode = { launcher: "next-start", workers: 1 };
  }
  const build = ensureBuild({
    label: "the service",
    projectDir: dir,
    distDir: path.join(dir, ".next"),
    sources: ["app", "components", "lib", "inngest", "drizzle", "instrumentation.ts", "instrumentation-node.ts", "next.config.ts", "package.json"].map((p) =>
      path.join(dir, p),
    ),
    rebuild: opts.rebuild,
    env: BASE_ENV,
    log: opts.log,
  });
  if (build.stale) {
    opts.log(`WARNING: the service's build (${build.builtAt}) is older than its sources; pass --rebuild to measure the current code`);
  }
  const server = await startNext({
    label: "the service",
    projectDir: dir,
    readyPath: "/v1/athletes/me",
    mode,
    launcherScript: launcherIn(dir),
    onOutput: opts.onOutput,
    env: {
      ...BASE_ENV,
      DATABASE_URL: opts.databaseUrl,
      SEED_DEMO: "false",
      LOG_LEVEL: "warn",
      RATE_LIMIT_15MIN: "100000000",
      RATE_LIMIT_DAILY: "100000000",
      // Keeps the service from writing a generated secret into the repository's .data.
      AUTH_SECRET: randomBytes(32).toString("base64url"),
      DATA_DIR: path.join(CACHE_DIR, "service-data"),
      ...opts.env,
    },
  });
  return { server, build, dir, mode, modeText: describeMode(mode) };
}

/**
 * The baseline, built from bench/bare-next whenever its sources or `next` are newer than its
 * build, and served in the service's mode (the same launcher and workers) so that the two
 * differ only in what their handlers do.
 */
export async function startBare(opts: {
  log: (s: string) => void;
  mode: ServeMode;
  /** Extra settings, e.g. BENCH_BYTES_DIR for GET /bytes/{name}. */
  env?: Record<string, string | undefined>;
  /** Every line the bare app writes. */
  onOutput?: (line: string) => void;
}): Promise<Started> {
  const mode = opts.mode;
  const projectDir = path.join(REPO_ROOT, "bench", "bare-next");
  const build = ensureBuild({
    label: "the bare Next.js app",
    projectDir,
    distDir: path.join(CACHE_DIR, "bare-next"),
    sources: [projectDir, path.join(REPO_ROOT, "node_modules", "next", "package.json")],
    rebuild: "when-stale",
    env: BASE_ENV,
    log: opts.log,
  });
  const server = await startNext({
    label: "the bare Next.js app",
    projectDir,
    readyPath: "/bare",
    env: { ...BASE_ENV, ...opts.env },
    mode,
    launcherScript: launcherIn(REPO_ROOT),
    onOutput: opts.onOutput,
  });
  return { server, build, dir: projectDir, mode, modeText: describeMode(mode) };
}
