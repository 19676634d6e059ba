// Every process the bench starts is registered here and stopped on the way out: at the end of
// a scenario, on an error, and on Ctrl-C.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from "node:child_process";
import { once } from "node:events";

const running = new Set<ChildProcess>();

export type Started = {
  child: ChildProcess;
  /** The last lines the process wrote, for error messages. */
  output: () => string;
  stop: () => Promise<void>;
};

/**
 * Starts `command` as the leader of its own process group, so stopping it also stops
 * anything it spawned, and nothing else.
 */
export function startProcess(command: string, args: string[], options: SpawnOptions, onLine?: (line: string) => void): Started {
  const child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    const fresh = chunk.toString("utf8").split("\n").filter(Boolean);
    if (onLine) for (const line of fresh) onLine(line);
    lines.push(...fresh);
    if (lines.length > 60) lines.splice(0, lines.length - 60);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  child.once("exit", () => running.delete(child));
  return { child, output: () => lines.join("\n"), stop: () => stopProcess(child) };
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function stopProcess(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    running.delete(child);
    return;
  }
  const exited = once(child, "exit");
  signalGroup(child, "SIGTERM");
  const timer = setTimeout(() => signalGroup(child, "SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
  // Children of the leader that ignored SIGTERM.
  signalGroup(child, "SIGKILL");
  running.delete(child);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((c) => stopProcess(c)));
}

/** Last resort from a synchronous `exit` handler. */
export function killAllNow(): void {
  for (const child of running) signalGroup(child, "SIGKILL");
  running.clear();
}

/** Runs a command to completion with its output shown, throwing on failure. */
export function runVisible(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): void {
  const r = spawnSync(command, args, { ...options, stdio: "inherit" });
  if (r.status !== 0) throw new Error(`${[command, ...args].join(" ")} failed (${r.signal ?? `exit ${r.status}`})`);
}
