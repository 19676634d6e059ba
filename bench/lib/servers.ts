// The two servers the scenarios compare: the service's production build over PostgreSQL, and a
// bare Next.js app whose one route handler returns a fixed JSON body.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { CACHE_DIR, REPO_ROOT } from "./paths";
import { ensureBuild, startNext, type BuildState, type NextServer } from "./next-server";

const BASE_ENV: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" };

export type Started = { server: NextServer; build: BuildState; dir: string };

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
  env?: NodeJS.ProcessEnv;
}): Promise<Started> {
  const dir = opts.dir ?? REPO_ROOT;
  const build = ensureBuild({
    label: "the service",
    projectDir: dir,
    distDir: path.join(dir, ".next"),
    sources: ["app", "components", "lib", "inngest", "drizzle", "instrumentation.ts", "next.config.ts", "package.json"].map((p) =>
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
  return { server, build, dir };
}

/** The baseline, built from bench/bare-next whenever its sources or `next` are newer than its build. */
export async function startBare(opts: { log: (s: string) => void }): Promise<Started> {
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
  const server = await startNext({ label: "the bare Next.js app", projectDir, readyPath: "/bare", env: BASE_ENV });
  return { server, build, dir: projectDir };
}
