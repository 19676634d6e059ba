// runtime: what the runtime and the serving options buy, side by side in one run, on api-read's
// world and endpoints (GET /v1/athletes/me, and the activity list, page size 50).
//
// Variants of the service, each its own production server over the same build and database:
//   node24        Node 24 as `npm start` runs it now: no preload, V8's own heap policy
//   node24+proxy  plus the Node 20 Request-signal preload (bench/lib/node20-request-signal.mjs)
//   node24+heap   plus --heap-growing-percent=800
//   node20+both   Node 20 (BENCH_NODE20, /usr/bin/node by default) with both, as production ran
//                 until Node 24
//   node24, 2 wk  two worker processes instead of the plan's one (2 cores, local PostgreSQL)
//   COMPRESS=false  Next.js's gzip off, as behind a proxy that compresses (the list is also
//                 measured with Accept-Encoding: gzip, on this and on node24)
// and the bare Next.js handler on each runtime, and under plain `next start` (Next.js's own
// server, without the front server of scripts/server.mjs). Rounds alternate over every variant; max req/s
// (closed loop) and p99 at half of each variant's own max (open loop) are kept per round.
// It reports; the decision it informs is written up in bench/README.md ("Runtime").
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { HALF_LOAD_WARMUP_S, PAGE_SIZE, WORLD } from "./api-read";
import { CpuMeter, cpuPerRequest, measured, statFields, type CpuUse } from "./lib/cpu";
import { databaseUrl, BENCH_DB } from "./lib/database";
import { atRate, getJson, throughput, type RateResult, type Target, type ThroughputResult } from "./lib/load";
import type { ServeMode } from "./lib/next-server";
import { CACHE_DIR, REPO_ROOT } from "./lib/paths";
import { runVisible } from "./lib/processes";
import type { ScenarioReport } from "./lib/report";
import type { Scenario } from "./lib/scenario";
import { startBare, startService, type Started } from "./lib/servers";
import { createBenchToken, prepareWorld, resetRateLimits } from "./lib/world";

const NODE20 = process.env.BENCH_NODE20 ?? "/usr/bin/node";
const PROXY = ["--import", pathToFileURL(path.join(REPO_ROOT, "bench", "lib", "node20-request-signal.mjs")).href];
const HEAP = ["--heap-growing-percent=800"];

/** `gzip`: also measure the list as a browser or proxy asks for it (Accept-Encoding: gzip). */
type Variant = { key: string; mode: ServeMode; bare?: boolean; env?: Record<string, string>; gzip?: boolean };

function variants(log: (s: string) => void): Variant[] {
  const one = (extra: Partial<ServeMode>): ServeMode => ({ launcher: "serve", workers: 1, ...extra });
  const list: Variant[] = [
    { key: "bare node24", mode: one({}), bare: true },
    { key: "bare node24 next-start", mode: { launcher: "next-start", workers: 1 }, bare: true },
    { key: "bare node24 standalone", mode: { launcher: "standalone", workers: 1, script: standaloneBare(log) }, bare: true },
    { key: "node24", mode: one({}), gzip: true },
    { key: "node24 COMPRESS=false", mode: one({}), env: { COMPRESS: "false" }, gzip: true },
    { key: "node24+proxy", mode: one({ nodeArgs: PROXY }) },
    { key: "node24+heap", mode: one({ nodeArgs: HEAP }) },
    { key: "node24, 2 workers", mode: one({ workers: 2 }) },
  ];
  if (existsSync(NODE20)) {
    list.push({ key: "bare node20+both", mode: one({ node: NODE20, nodeArgs: [...PROXY, ...HEAP] }), bare: true });
    list.push({ key: "node20+both", mode: one({ node: NODE20, nodeArgs: [...PROXY, ...HEAP] }) });
  }
  return list;
}

/**
 * The bare app built with `output: "standalone"` (Next.js's minimal server.js and traced
 * node_modules), in a folder of its own under the bench's cache: a standalone build traces
 * from its project root, and Turbopack refuses a node_modules linked from outside it, so the
 * repository's node_modules is hard-linked in. Built when missing. Returns its server.js.
 */
function standaloneBare(log: (s: string) => void): string {
  const dir = path.join(CACHE_DIR, "bare-standalone");
  const serverJs = path.join(dir, ".next", "standalone", "server.js");
  if (existsSync(path.join(dir, ".next", "BUILD_ID")) && existsSync(serverJs)) return serverJs;
  log("building the bare app as a standalone build…");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, "node_modules"), { recursive: true });
  cpSync(path.join(REPO_ROOT, "bench", "bare-next", "app"), path.join(dir, "app"), { recursive: true });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "bare-standalone", private: true }));
  writeFileSync(
    path.join(dir, "next.config.mjs"),
    `export default { output: "standalone", poweredByHeader: false, outputFileTracingRoot: ${JSON.stringify(dir)} };\n`,
  );
  const modules = path.join(REPO_ROOT, "node_modules");
  const entries = readdirSync(modules).filter((e) => e !== ".cache").map((e) => path.join(modules, e));
  execFileSync("cp", ["-al", ...entries, path.join(dir, "node_modules")]);
  // Its own copy of next, so that Next.js and the app load the same React.
  runVisible(process.execPath, [path.join(dir, "node_modules", "next", "dist", "bin", "next"), "build", dir], { cwd: dir, env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" } });
  return serverJs;
}

/** The largest resident set any process of a server's group reached (VmHWM), in MB. */
function peakRssMb(pgid: number): number {
  let peak = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (Number(statFields(stat).f[2]) !== pgid) continue;
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (hwm) peak = Math.max(peak, Number(hwm[1]) / 1024);
    } catch {
      // exited
    }
  }
  return Math.round(peak);
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function run(opts: Parameters<Scenario["run"]>[0], log: (s: string) => void): Promise<ScenarioReport> {
  const url = databaseUrl();
  const world = await prepareWorld(url, BENCH_DB, WORLD, log);
  const token = await createBenchToken(url, world.typicalAthleteId, ["athlete.read", "activities.read"]);
  await resetRateLimits(url);
  const meter = new CpuMeter(BENCH_DB);
  const started: { v: Variant; s: Started }[] = [];
  try {
    let rebuild = opts.rebuild; // once: the variants serve the same build
    for (const v of variants(log)) {
      const s = v.bare ? await startBare({ log, mode: v.mode }) : await startService({ databaseUrl: url, rebuild, log, dir: opts.serviceDir, mode: v.mode, env: v.env });
      if (!v.bare) rebuild = false;
      meter.addGroup(s.server.pid, v.key);
      started.push({ v, s });
      log(`${v.key.padEnd(18)} on ${s.server.url}`);
    }
    const auth = { Authorization: `Bearer ${token.token}` };
    type Key = "me" | "list" | "list-gzip" | "bare";
    const targetsOf = ({ v, s }: (typeof started)[number]): Partial<Record<Key, Target>> => {
      if (v.bare) return { bare: { url: `${s.server.url}/bare` } };
      const list = `${s.server.url}/v1/athletes/me/activities?limit=${PAGE_SIZE}`;
      return {
        me: { url: `${s.server.url}/v1/athletes/me`, headers: auth },
        list: { url: list, headers: auth },
        ...(v.gzip ? { "list-gzip": { url: list, headers: { ...auth, "Accept-Encoding": "gzip" } } } : {}),
      };
    };
    for (const x of started) {
      for (const t of Object.values(targetsOf(x))) {
        await getJson(t);
        await throughput(t, { connections: opts.connections, durationS: 3 });
      }
    }

    type Row = { max: (ThroughputResult & { cpu?: CpuUse })[]; half: (RateResult & { cpu?: CpuUse })[]; errors: string[] };
    const rows = new Map<string, Row>();
    const row = (k: string) => rows.get(k) ?? (rows.set(k, { max: [], half: [], errors: [] }), rows.get(k)!);
    // A variant that fails a measurement (a connection it closed, an error answer) is recorded as
    // such and the comparison goes on: one variant's failure is itself a figure.
    const attempt = async <T>(name: string, fn: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await fn();
      } catch (err) {
        row(name).errors.push(err instanceof Error ? err.message : String(err));
        log(`${name}: ERROR ${err instanceof Error ? err.message : String(err)}`);
        return undefined;
      }
    };
    for (let r = 1; r <= opts.rounds; r++) {
      for (const x of started) {
        for (const [key, t] of Object.entries(targetsOf(x)) as [Key, Target][]) {
          const m = await attempt(`${x.v.key} ${key}`, () =>
            measured(meter, log, () => throughput(t, { connections: opts.connections, durationS: opts.durationS })),
          );
          if (!m) continue;
          row(`${x.v.key} ${key}`).max.push(m);
          log(`round ${r}/${opts.rounds} ${`${x.v.key} ${key}`.padEnd(26)} ${Math.round(m.rps).toLocaleString("en").padStart(6)} req/s`);
        }
      }
      for (const x of started) {
        if (x.v.bare) continue;
        for (const [key, t] of Object.entries(targetsOf(x)) as [Key, Target][]) {
          const rw = row(`${x.v.key} ${key}`);
          const rps = Math.round(median(rw.max.map((m) => m.rps)) / 2);
          if (!(rps > 0)) continue;
          const h = await attempt(`${x.v.key} ${key}`, () => measured(meter, log, () => atRate(t, { rps, durationS: opts.durationS, warmupS: HALF_LOAD_WARMUP_S })));
          if (!h) continue;
          rw.half.push(h);
          log(`round ${r}/${opts.rounds} ${`${x.v.key} ${key}`.padEnd(26)} at ${rps} req/s: p50 ${h.latencyMs.p50} ms, p99 ${h.latencyMs.p99} ms`);
        }
      }
    }

    const figures = [...rows.entries()].map(([name, rw]) => {
      const rps = rw.max.map((m) => Math.round(m.rps));
      const part = name.split(" ").slice(0, -1).join(" ");
      const cpu = rw.max.map((m) => {
        const per = cpuPerRequest(m.cpu, m.requests, m.durationS);
        return per ? round2((per[part] ?? 0) + (name.startsWith("bare") ? 0 : (per.postgres ?? 0))) : NaN;
      });
      const p99 = rw.half.map((h) => h.latencyMs.p99);
      return {
        name,
        value:
          `${rps.join(" / ")} req/s; CPU ${median(cpu)} ms/req` +
          (p99.length ? `; p99 at half load ${p99.join(" / ")} ms` : "") +
          (rw.errors.length ? `; ${rw.errors.length} failed measurement(s): ${rw.errors[0]}` : "") +
          `; peak RSS ${peakRssMb(started.find((x) => name.startsWith(x.v.key + " "))!.s.server.pid)} MB`,
      };
    });
    const worstOthers = Math.max(...[...rows.values()].flatMap((rw) => [...rw.max, ...rw.half].map((m) => m.cpu?.othersCores ?? 0)));
    return {
      figures: [
        ...figures,
        { name: "load", value: `${opts.connections} connections × ${opts.durationS} s, ${opts.rounds} alternating rounds; half load at half the median max` },
        { name: "runtimes", value: `node24 ${process.version}; node20 ${NODE20}${existsSync(NODE20) ? "" : " (absent: skipped)"}` },
        { name: "other processes' CPU, worst measurement", value: `${worstOthers} cores` },
      ],
      checks: [],
      warnings: worstOthers > 0.2 ? [`other processes used up to ${worstOthers} of ${os.availableParallelism()} cores during a measurement`] : [],
      details: { rounds: Object.fromEntries(rows), variants: started.map((x) => ({ key: x.v.key, mode: x.v.mode })) },
    };
  } finally {
    await Promise.all(started.map((x) => x.s.server.stop()));
  }
}

export const runtime: Scenario = {
  name: "runtime",
  summary: "Node 24 against Node 20, the Node 20 workarounds and the worker plan, side by side on api-read's endpoints",
  onlyWhenNamed: true,
  run,
};
