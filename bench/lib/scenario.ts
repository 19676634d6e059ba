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
};

export type Scenario = {
  name: string;
  summary: string;
  run: (opts: BenchOptions, log: (line: string) => void) => Promise<ScenarioReport>;
};
