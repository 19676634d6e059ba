// Max throughput of several servers compared with each other, measured in turns within each round.
import { cpuText, untilQuiet, type CpuMeter, type CpuUse } from "./cpu";
import { throughput, type Target, type ThroughputResult } from "./load";

/** How long each target holds the machine in one turn (whole seconds: autocannon stops on its
 * one-second sampling tick). */
export const TURN_S = 2;

/**
 * Seconds of saturation each target gets before the measured rounds, in turns as the rounds
 * run. A fresh Next.js server keeps getting faster for a minute or more under load, the bare
 * baseline more slowly than the service: with 3 s each, the bare app was still cold in every
 * round and the ratios favoured the service (bench/README.md, "The bare handler is slower than
 * `/me` in the bench").
 */
export const WARMUP_S = 40;

/** Warms every target for WARMUP_S seconds of its own, in turns; nothing is reported. */
export async function warmUpInTurns<K extends string>(meter: CpuMeter, log: (s: string) => void, targets: Record<K, Target>, connections: number): Promise<void> {
  log(`warming up (${WARMUP_S} s each, in turns)…`);
  await throughputInTurns(meter, log, targets, { connections, durationS: WARMUP_S, rounds: 1, quietLog: true });
}

type Turn = ThroughputResult & { cpu?: CpuUse };
export type TurnsResult = Turn & { turns: number[] };

/**
 * Each round gives every target about `durationS` seconds of saturation, in turns of `TURN_S`
 * seconds (A B C, B C A, C A B, …), rather than one window each in a row. These 2-core hosts
 * drift: the same handler's rate moved by a third between two 10-second windows a minute apart,
 * so a ratio between windows taken one after the other measured the host as much as the code.
 * In turns, every target sees the same stretch of the host, and a round's ratio compares code.
 *
 * A round's figure per target: its requests over its time in all its turns; p50 the median of
 * its turns', p99 the worst of its turns'; CPU use averaged over its turns by their length. The
 * machine must be quiet before each round (`untilQuiet`, as for `measured`). Each round's figure
 * is logged (under `label(key)`, the key itself unless told) and handed to `onRound`.
 */
export async function throughputInTurns<K extends string>(
  meter: CpuMeter,
  log: (s: string) => void,
  targets: Record<K, Target>,
  opts: {
    connections: number;
    durationS: number;
    rounds: number;
    turnS?: number;
    label?: (key: K) => string;
    /** Log nothing per round (a warm-up). */
    quietLog?: boolean;
  },
  onRound?: (round: number, key: K, result: TurnsResult) => void,
): Promise<Record<K, TurnsResult[]>> {
  const keys = Object.keys(targets) as K[];
  const label = opts.label ?? ((k: K) => k);
  const width = Math.max(...keys.map((k) => label(k).length));
  const turnS = opts.turnS ?? TURN_S;
  const turns = Math.max(1, Math.round(opts.durationS / turnS));
  const rounds = Object.fromEntries(keys.map((k) => [k, [] as TurnsResult[]])) as Record<K, TurnsResult[]>;
  for (let r = 1; r <= opts.rounds; r++) {
    await untilQuiet(meter, log);
    const slices = Object.fromEntries(keys.map((k) => [k, [] as Turn[]])) as Record<K, Turn[]>;
    for (let t = 0; t < turns; t++) {
      // Each target goes first in turn, so none always follows the same one.
      for (let i = 0; i < keys.length; i++) {
        const key = keys[(t + i) % keys.length]!;
        const start = meter.snapshot();
        const result = await throughput(targets[key], { connections: opts.connections, durationS: turnS });
        slices[key].push({ ...result, cpu: meter.since(start) });
      }
    }
    for (const key of keys) {
      const result = combine(slices[key]);
      rounds[key].push(result);
      if (!opts.quietLog) {
        log(
          `round ${r}/${opts.rounds} ${label(key).padEnd(width)} ${Math.round(result.rps).toLocaleString("en").padStart(6)} req/s` +
            `  (p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms; ${cpuText(result.cpu)}; turns ${result.turns.join(" / ")})`,
        );
      }
      onRound?.(r, key, result);
    }
  }
  return rounds;
}

export function combine(slices: Turn[]): TurnsResult {
  const requests = slices.reduce((a, s) => a + s.requests, 0);
  const durationS = slices.reduce((a, s) => a + s.durationS, 0);
  const p50s = slices.map((s) => s.latencyMs.p50).sort((a, b) => a - b);
  return {
    rps: requests / durationS,
    requests,
    durationS,
    connections: slices[0]!.connections,
    latencyMs: { p50: p50s[Math.floor(p50s.length / 2)]!, p99: Math.max(...slices.map((s) => s.latencyMs.p99)) },
    cpu: averageCpu(slices),
    turns: slices.map((s) => Math.round(s.requests / s.durationS)),
  };
}

/**
 * CPU use over several windows, each weighted by its length (other processes' use: the most of
 * any window, so a neighbour's burst is not averaged away); unknown if any window's is.
 */
export function averageCpu(windows: { cpu?: CpuUse; durationS: number }[]): CpuUse | undefined {
  if (windows.length === 0 || windows.some((w) => !w.cpu)) return undefined;
  const total = windows.reduce((a, w) => a + w.durationS, 0);
  const mean = (pick: (c: CpuUse) => number) => Math.round((windows.reduce((a, w) => a + pick(w.cpu!) * w.durationS, 0) / total) * 100) / 100;
  const parts = new Set(windows.flatMap((w) => Object.keys(w.cpu!.parts)));
  return {
    busyCores: mean((c) => c.busyCores),
    oursCores: mean((c) => c.oursCores),
    othersCores: Math.max(...windows.map((w) => w.cpu!.othersCores)),
    parts: Object.fromEntries([...parts].map((p) => [p, mean((c) => c.parts[p] ?? 0)])),
  };
}
