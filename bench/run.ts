// `npm run bench [-- <scenario>…] [--duration S] [--connections N] [--rounds N] [--rebuild]
//   [--service-dir DIR] [--scale F] [--parts restart,kill,flap,fuzz]`
// Runs the named scenarios (all without a name), prints each one's figures and targets, and
// writes bench/results/latest.json. It reports; it does not gate: a missed target is printed
// as FAIL and the exit code stays 0. Errors (a server that will not start, non-2xx answers)
// exit 1.
import path from "node:path";
import { parseArgs } from "node:util";
import { apiRead } from "./api-read";
import { files } from "./files";
import { mcp } from "./mcp";
import { FAULT_PARTS, faults, type FaultPart } from "./faults";
import { oauthToken } from "./oauth-token";
import { runtime } from "./runtime";
import { REPO_ROOT } from "./lib/paths";
import { killAllNow, stopAll } from "./lib/processes";
import { machineInfo, printReport, writeResults, type ScenarioReport } from "./lib/report";
import type { BenchOptions, Scenario } from "./lib/scenario";
import { webhooks } from "./webhooks";

const SCENARIOS: Scenario[] = [apiRead, mcp, oauthToken, webhooks, files, faults, runtime];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "32" },
    rounds: { type: "string", default: "3" },
    rebuild: { type: "boolean", default: false },
    "service-dir": { type: "string" },
    scale: { type: "string", default: "1" },
    parts: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});

if (values.help) {
  console.log(
    `npm run bench [-- <scenario>…] [--duration S] [--connections N] [--rounds N] [--rebuild] [--service-dir DIR]\n\n` +
      `  --duration S      seconds per measurement (10)\n` +
      `  --connections N   connections of the throughput runs (32)\n` +
      `  --rounds N        throughput rounds, each measuring every side in turns of 2 s (3)\n` +
      `  --rebuild         rebuild the service's production build first\n` +
      `  --service-dir DIR measure another checkout's build (a candidate change), same database\n` +
      `  --scale F         faults: the issue's counts × F, for a quick run (1)\n` +
      `  --parts P,…       faults: which parts to run (${FAULT_PARTS.join(",")}; all)\n\nScenarios:\n` +
      SCENARIOS.map((s) => `  ${s.name.padEnd(12)} ${s.summary}${s.onlyWhenNamed ? " (only when named)" : ""}`).join("\n"),
  );
  process.exit(0);
}

const unknown = positionals.filter((p) => !SCENARIOS.some((s) => s.name === p));
if (unknown.length > 0) {
  console.error(`Unknown scenario ${unknown.join(", ")}; known: ${SCENARIOS.map((s) => s.name).join(", ")}`);
  process.exit(2);
}
const selected = positionals.length > 0 ? SCENARIOS.filter((s) => positionals.includes(s.name)) : SCENARIOS.filter((s) => !s.onlyWhenNamed);

const positive = (name: string, raw: string) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} must be a positive whole number`);
    process.exit(2);
  }
  return n;
};
const scale = Number(values.scale);
if (!(scale > 0 && scale <= 1)) {
  console.error("--scale must be a number above 0 and at most 1");
  process.exit(2);
}
const parts = values.parts?.split(",").map((p) => p.trim()) as FaultPart[] | undefined;
if (parts?.some((p) => !FAULT_PARTS.includes(p))) {
  console.error(`--parts takes ${FAULT_PARTS.join(", ")}`);
  process.exit(2);
}
const options: BenchOptions = {
  durationS: positive("duration", values.duration),
  connections: positive("connections", values.connections),
  rounds: positive("rounds", values.rounds),
  rebuild: values.rebuild,
  serviceDir: path.resolve(values["service-dir"] ?? REPO_ROOT),
  scale,
  parts,
};

// Servers must not outlive the bench: stop them on Ctrl-C, on kill, and on any way out.
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`\n${signal}: stopping the servers…`);
    void stopAll().finally(() => process.exit(130));
  });
}
process.on("exit", killAllNow);

const machine = machineInfo();
console.log(
  `bench on ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}, next ${machine.next}, ` +
    `commit ${machine.commit}${machine.worktreeChanged ? " + uncommitted changes" : ""}`,
);

const started = new Date();
const results: Record<string, ScenarioReport | { error: string }> = {};
let failed = false;
for (const scenario of selected) {
  const t0 = performance.now();
  const log = (line: string) =>
    console.log(`[${scenario.name} ${((performance.now() - t0) / 1000).toFixed(0).padStart(3)} s] ${line}`);
  try {
    const report = await scenario.run(options, log);
    printReport(scenario.name, report);
    results[scenario.name] = report;
    writeResults(`${scenario.name}.json`, { startedAt: started.toISOString(), machine, options, ...report });
  } catch (err) {
    failed = true;
    console.error(`\n${scenario.name}: ERROR ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    results[scenario.name] = { error: String(err) };
  } finally {
    await stopAll();
  }
}

const file = writeResults("latest.json", {
  startedAt: started.toISOString(),
  finishedAt: new Date().toISOString(),
  machine,
  options,
  scenarios: results,
});
console.log(`results written to ${file}`);
process.exit(failed ? 1 : 0);
