// faults: the service under faults, on PostgreSQL. It reports and does not gate.
//
// 1. restart: PostgreSQL restarted 3 times under a steady write and read load (answers during
//    the outage are 503 problems with Retry-After; the service recovers by itself; every write
//    that got a 2xx is in the database afterwards).
// 2. kill: the service SIGKILLed 20 times during a burst of webhook-producing writes, started
//    again each time (every committed event reaches every entitled subscription at least once;
//    duplicates carry the same event id).
// 3. flap: receivers that answer 500, time out and refuse connections in turns while 10,000
//    events are written, on a fast retry schedule (the delivered set equals the committed set
//    once they recover).
// 4. fuzz: 10,000 generated hostile requests over every /v1, OAuth and console route (zero 5xx;
//    every 4xx a problem document with a CONTRACT §3 code, or RFC 6749's shape).
//
// Each part has a scratch database of its own, dropped at the end. `--scale F` multiplies the
// counts for a quick run; `--parts restart,kill,flap,fuzz` picks parts. The restart part stops
// the machine's PostgreSQL cluster (pg_ctlcluster) three times for 2 s: everyone's sessions on
// it are cut.
import { flappingReceivers } from "./faults/flap";
import { generatedRequests } from "./faults/fuzz";
import { killDuringBurst } from "./faults/kill";
import { restartUnderLoad } from "./faults/restart";
import type { FaultOptions } from "./faults/common";
import type { ScenarioReport } from "./lib/report";
import type { Scenario } from "./lib/scenario";

const PARTS = { restart: restartUnderLoad, kill: killDuringBurst, flap: flappingReceivers, fuzz: generatedRequests } as const;
export type FaultPart = keyof typeof PARTS;
export const FAULT_PARTS = Object.keys(PARTS) as FaultPart[];

export const faults: Scenario = {
  name: "faults",
  summary: "PostgreSQL restarts, SIGKILLs, flapping receivers, 10,000 hostile requests (reports, never gates)",
  // It restarts the machine's PostgreSQL and takes about 10 minutes.
  onlyWhenNamed: true,
  async run(opts, log): Promise<ScenarioReport> {
    const o: FaultOptions = { ...opts, scale: opts.scale ?? 1 };
    const parts = opts.parts ?? FAULT_PARTS;
    const report: ScenarioReport = { figures: [], checks: [], warnings: [], details: { scale: o.scale, parts } };
    if (o.scale !== 1) report.warnings.push(`counts scaled by ${o.scale}: not the issue's numbers`);
    report.warnings.push("figures from a shared 2-core machine: timings are noisy; the counts of lost, missing and 5xx are what this scenario is for");
    for (const part of parts) {
      const started = performance.now();
      log(`— ${part} —`);
      try {
        const r = await PARTS[part](o, log);
        report.figures.push(...r.figures, { name: `${part}: took, s`, value: Math.round((performance.now() - started) / 1000) });
        report.checks.push(...r.checks);
        report.details[part] = r.details;
      } catch (err) {
        // One part failing to run does not stop the others; the run then exits 1.
        report.details[part] = { error: String(err) };
        report.warnings.push(`${part} could not run: ${err instanceof Error ? err.message : String(err)}`);
        log(`${part}: ERROR ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      }
    }
    return report;
  },
};
