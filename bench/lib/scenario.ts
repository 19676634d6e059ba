import type { ScenarioReport } from "./report";

export type BenchOptions = {
  /** Seconds of each throughput and fixed-rate measurement. */
  durationS: number;
  /** Connections of each throughput measurement. */
  connections: number;
  /** Alternating rounds of throughput measurements; the best round of each side counts. */
  rounds: number;
  /** Rebuild the service even when a build exists. */
  rebuild: boolean;
  /** The checkout whose production build is measured: this repository unless told otherwise. */
  serviceDir: string;
  /** The fault scenario's counts × this (the numbers at 1). */
  scale?: number;
  /** The parts of the fault scenario to run (all unless told). */
  parts?: ("restart" | "kill" | "flap" | "fuzz")[];
};

export type Scenario = {
  name: string;
  summary: string;
  /** Run only when named (`npm run bench -- faults`), not by a bare `npm run bench`. */
  onlyWhenNamed?: boolean;
  run: (opts: BenchOptions, log: (line: string) => void) => Promise<ScenarioReport>;
};
