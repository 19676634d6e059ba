// CPU accounting from /proc (Linux): how much of the machine other work took while a figure
// was measured. On a 2-core machine a concurrent build or test run halves what the servers get,
// so every measurement records it and the report says when it was not negligible.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";

const TICKS_PER_S = 100; // USER_HZ, 100 on Linux

/** Per process of ours: its part and CPU ticks so far. */
type Snapshot = { at: number; busy: number; ours: Map<string, { part: string; ticks: number }> } | null;

export type CpuUse = {
  /** Cores busy on average over the window, all processes. */
  busyCores: number;
  /** Of which: the bench, the servers it started (their process groups), and PostgreSQL (its own
   * processes and the sessions of the bench database). */
  oursCores: number;
  /** Everything else on the machine. */
  othersCores: number;
  /** Ours by part: each labelled server, "postgres" and "bench" (the load generator). */
  parts: Record<string, number>;
};

function systemBusyTicks(): number {
  const [cpu] = readFileSync("/proc/stat", "utf8").split("\n");
  const f = cpu!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return total - f[3]! - f[4]!; // minus idle and iowait
}

/** PostgreSQL's own processes, and client backends of `database`; not other databases' sessions. */
function isOurPostgres(pid: string, database: string | undefined): boolean {
  let title: string;
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return false;
  }
  const client = /^postgres: \S+: \S+ (\S+) (\S+\(\d+\)|\[local\])/.exec(title);
  return !client || !database || client[1] === database;
}

/**
 * A /proc stat line's command name and the fields after it (state first: the process group is
 * [2], user and system ticks [11] and [12]). The name is in parentheses and may hold spaces.
 */
export function statFields(stat: string): { comm: string; f: string[] } {
  const close = stat.lastIndexOf(")");
  return { comm: stat.slice(stat.indexOf("(") + 1, close), f: stat.slice(close + 2).split(" ") };
}

function ourTicks(groups: Map<number, string>, database: string | undefined): Map<string, { part: string; ticks: number }> {
  const ours = new Map<string, { part: string; ticks: number }>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // exited
    }
    const { comm, f } = statFields(stat);
    const pgrp = Number(f[2]);
    const part =
      Number(pid) === process.pid
        ? "bench"
        : (groups.get(pgrp) ?? (comm === "postgres" && isOurPostgres(pid, database) ? "postgres" : undefined));
    if (part) ours.set(pid, { part, ticks: Number(f[11]) + Number(f[12]) });
  }
  return ours;
}

export class CpuMeter {
  private groups = new Map<number, string>();

  /** Milliseconds left for waiting on other work, over all measurements. */
  private waitBudgetMs: number;

  /**
   * `database`: the PostgreSQL database whose sessions count as ours. `waitBudgetMs` bounds
   * the time all `waitForQuiet` calls together may spend, so a busy machine delays a run
   * by at most that much.
   */
  constructor(
    private readonly database?: string,
    waitBudgetMs = 120_000,
  ) {
    this.waitBudgetMs = waitBudgetMs;
  }

  /** Counts a started server (the leader of its own process group) as ours, under `label`. */
  addGroup(pgid: number, label: string): void {
    this.groups.set(pgid, label);
  }

  snapshot(): Snapshot {
    if (os.platform() !== "linux") return null;
    try {
      return { at: performance.now(), busy: systemBusyTicks(), ours: ourTicks(this.groups, this.database) };
    } catch {
      return null;
    }
  }

  since(start: Snapshot): CpuUse | undefined {
    const end = this.snapshot();
    if (!start || !end) return undefined;
    const seconds = (end.at - start.at) / 1000;
    const cores = (ticks: number) => Math.round((ticks / TICKS_PER_S / seconds) * 100) / 100;
    // Per process, so one that exits in between does not subtract its whole history; one
    // that started in between counts from zero.
    const ticks: Record<string, number> = {};
    for (const [pid, p] of end.ours) ticks[p.part] = (ticks[p.part] ?? 0) + p.ticks - (start.ours.get(pid)?.ticks ?? 0);
    const parts = Object.fromEntries(Object.entries(ticks).map(([k, t]) => [k, cores(t)]));
    const busy = cores(end.busy - start.busy);
    const ours = cores(Object.values(ticks).reduce((a, b) => a + b, 0));
    return { busyCores: busy, oursCores: ours, othersCores: Math.max(0, Math.round((busy - ours) * 100) / 100), parts };
  }

  /**
   * Waits (up to `maxWaitMs`) until the machine is nearly idle while the bench is not loading
   * it, so a measurement does not start in the middle of someone's build. Returns the cores
   * other work used in the last sample.
   */
  async waitForQuiet(opts: { thresholdCores: number; maxWaitMs: number; onWait?: (othersCores: number) => void }): Promise<number> {
    const started = Date.now();
    const deadline = started + Math.min(opts.maxWaitMs, this.waitBudgetMs);
    let warned = false;
    try {
      for (;;) {
        const s = this.snapshot();
        await new Promise((r) => setTimeout(r, 500));
        const use = this.since(s);
        if (!use) return 0;
        if (use.busyCores <= opts.thresholdCores || Date.now() > deadline) return use.othersCores;
        if (!warned) opts.onWait?.(use.busyCores);
        warned = true;
      }
    } finally {
      this.waitBudgetMs = Math.max(0, this.waitBudgetMs - (Date.now() - started));
    }
  }
}

/** A measurement's CPU use in a log line. */
export const cpuText = (c?: CpuUse) => (c ? `${c.oursCores} cores ours, ${c.othersCores} others` : "cpu n/a");

type Quiet = { thresholdCores?: number; maxWaitMs?: number };

/** Waits for a quiet machine before a measurement (`CpuMeter.waitForQuiet`), saying so when it waits. */
export async function untilQuiet(meter: CpuMeter, log: (s: string) => void, quiet: Quiet = {}): Promise<void> {
  await meter.waitForQuiet({
    thresholdCores: quiet.thresholdCores ?? 0.3,
    maxWaitMs: quiet.maxWaitMs ?? 20_000,
    onWait: (busy) => log(`waiting for other work on the machine to finish (${busy} cores busy)…`),
  });
}

/** CPU milliseconds per request, by part, from a measurement's CPU use. */
export function cpuPerRequest(cpu: CpuUse | undefined, requests: number, durationS: number): Record<string, number> | undefined {
  if (!cpu || requests === 0) return undefined;
  return Object.fromEntries(
    Object.entries(cpu.parts).map(([k, cores]) => [k, Math.round(((cores * durationS * 1000) / requests) * 100) / 100]),
  );
}

/** Runs `fn` on a quiet machine and records the CPU use while it ran. */
export async function measured<T extends object>(
  meter: CpuMeter,
  log: (s: string) => void,
  fn: () => Promise<T>,
  quiet: Quiet = {},
): Promise<T & { cpu?: CpuUse }> {
  await untilQuiet(meter, log, quiet);
  const start = meter.snapshot();
  const result = await fn();
  return { ...result, cpu: meter.since(start) };
}

/**
 * CPU ticks so far of the main threads (the JavaScript thread; its id is the process's) of the
 * processes in process group `pgid` whose command line matches `command`. A server's main
 * thread is the one its requests queue for: its figure says how much of what a workload costs
 * lands there, apart from the garbage collector's and libuv's helper threads and from other
 * processes (file workers). A process that exits takes its ticks with it.
 */
export function mainThreadTicks(pgid: number, command: RegExp): number {
  if (os.platform() !== "linux") return 0;
  let ticks = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const { f } = statFields(readFileSync(`/proc/${pid}/stat`, "utf8"));
      if (Number(f[2]) !== pgid) continue;
      if (!command.test(readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " "))) continue;
      // /proc/<pid>/stat sums every thread; the task of the same id is the main thread alone.
      const main = statFields(readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8")).f;
      ticks += Number(main[11]) + Number(main[12]);
    } catch {
      // exited
    }
  }
  return ticks;
}

/** Milliseconds of CPU that `ticks` are. */
export const ticksMs = (ticks: number) => (ticks / TICKS_PER_S) * 1000;
