// Production Next.js servers for the benchmarks: build when needed, start on a free port the way
// `npm start` serves (scripts/serve.mjs) or as plain `next start`, wait until they answer, stop them.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { NEXT_BIN } from "./paths";
import { runVisible, startProcess } from "./processes";

export type NextServer = {
  label: string;
  url: string;
  pid: number;
  stop: () => Promise<void>;
};

/**
 * How a server is run. `serve`: scripts/serve.mjs, the launcher of `npm start` (node:cluster
 * with `workers` processes; one means a plain `next start` child). `next-start`: `next start`
 * alone, one process, as the bench ran before `npm start` had a launcher of its own.
 */
export type ServeMode = {
  /** `standalone`: the server.js of an `output: "standalone"` build (`script`). */
  launcher: "serve" | "next-start" | "standalone";
  workers: number;
  /** The Node.js binary: the bench's own unless told (a side-by-side of two runtimes). */
  node?: string;
  /** Node options for every server process (the launcher passes its own on to its workers). */
  nodeArgs?: string[];
  /** For `standalone`: the build's server.js. */
  script?: string;
};

/** What scripts/serve.mjs prints once every worker listens. */
const ALL_LISTENING = "workers listening";

export const describeMode = (m: ServeMode) =>
  m.launcher === "next-start" ? "next start, 1 process" : m.launcher === "standalone" ? "a standalone build's server.js, 1 process" : `npm start's launcher (scripts/serve.mjs), ${m.workers} worker${m.workers === 1 ? "" : "s"}`;

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === "string") throw new Error("could not find a free port");
  return address.port;
}

function newestMtime(entry: string): number {
  const st = statSync(entry);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const e of readdirSync(entry, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name.startsWith(".")) continue;
    newest = Math.max(newest, newestMtime(path.join(entry, e.name)));
  }
  return newest;
}

export type BuildState = { buildId: string; builtAt: string; stale: boolean; builtNow: boolean };

/**
 * Builds `projectDir` when it has no build, or when `rebuild` says so. `sources` (files or
 * folders) newer than the build mark it stale; the caller decides what to do about that.
 */
export function ensureBuild(opts: {
  label: string;
  projectDir: string;
  distDir: string;
  sources: string[];
  rebuild: boolean | "when-stale";
  env: NodeJS.ProcessEnv;
  log: (s: string) => void;
}): BuildState {
  const buildIdFile = path.join(opts.distDir, "BUILD_ID");
  const isStale = () =>
    existsSync(buildIdFile) &&
    Math.max(...opts.sources.filter(existsSync).map(newestMtime)) > statSync(buildIdFile).mtimeMs;
  const missing = !existsSync(buildIdFile);
  const build = missing || opts.rebuild === true || (opts.rebuild === "when-stale" && isStale());
  if (build) {
    opts.log(`building ${opts.label} (${missing ? "no build yet" : "asked to rebuild"})…`);
    runVisible(process.execPath, [NEXT_BIN, "build", opts.projectDir], { cwd: opts.projectDir, env: opts.env });
  }
  return {
    buildId: readFileSync(buildIdFile, "utf8").trim(),
    builtAt: statSync(buildIdFile).mtime.toISOString(),
    stale: isStale(),
    builtNow: build,
  };
}

/**
 * `next start` on a free port. Ready once `readyPath` answers with something other than a
 * connection error or 503 (the service answers 503 until its database is open).
 */
export async function startNext(opts: {
  label: string;
  projectDir: string;
  env: NodeJS.ProcessEnv;
  readyPath: string;
  timeoutMs?: number;
  /** Plain `next start` unless told otherwise. */
  mode?: ServeMode;
  /** The launcher script for `mode.launcher === "serve"`. */
  launcherScript?: string;
  /** Every line the server writes (stdout and stderr). */
  onOutput?: (line: string) => void;
}): Promise<NextServer> {
  const port = await freePort();
  const listen = ["-p", String(port), "-H", "127.0.0.1"];
  const serve = opts.mode?.launcher === "serve";
  const proc = startProcess(
    opts.mode?.node ?? process.execPath,
    [
      ...(opts.mode?.nodeArgs ?? []),
      ...(serve
        ? [opts.launcherScript!, opts.projectDir, ...listen]
        : opts.mode?.launcher === "standalone"
          ? [opts.mode.script!]
          : [NEXT_BIN, "start", opts.projectDir, ...listen]),
    ],
    {
      cwd: opts.projectDir,
      env: { ...opts.env, PORT: String(port), HOSTNAME: "127.0.0.1", ...(serve ? { WEB_CONCURRENCY: String(opts.mode!.workers) } : {}) },
    },
    opts.onOutput,
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
      throw new Error(`${opts.label} exited before it was ready:\n${proc.output()}`);
    }
    try {
      const res = await fetch(url + opts.readyPath, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      // With several workers, the launcher says when the last of them listens.
      const allListening = !serve || opts.mode!.workers === 1 || proc.output().includes(ALL_LISTENING);
      if (res.status !== 503 && allListening) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await proc.stop();
      throw new Error(`${opts.label} was not ready within ${(opts.timeoutMs ?? 60_000) / 1000} s:\n${proc.output()}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { label: opts.label, url, pid: proc.child.pid!, stop: proc.stop };
}
