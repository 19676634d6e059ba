import { afterAll, describe, expect, it } from "vitest";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { openDatabase } from "./client";
import { createHash } from "node:crypto";
import { DirectoryInUse, lockDataDir } from "./directory-lock";

/**
 * One process at a time on an embedded database's directory: a second `npm start` or an
 * `npm run db:seed` beside a running service each saw only their own writes, and the directory
 * was left as whichever wrote last, or unreadable. The holder here is a real second process that
 * opens the database as the service does.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), "aas-lock-"));
  dirs.push(d);
  return d;
}

/** A process that opens the embedded database in `dir`, says so, and holds it until killed. */
function holder(dir: string) {
  const code = `
    const { openDatabase } = await import(${JSON.stringify(path.join(process.cwd(), "lib/db/client.ts"))});
    await openDatabase({ dataDir: ${JSON.stringify(dir)} });
    console.log("open");
    setInterval(() => {}, 1000);`;
  const proc = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", "--input-type=module", "-e", code], {
    env: { ...process.env, LOG_LEVEL: "silent" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const opened = new Promise<void>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on("line", (l) => l === "open" && resolve());
    proc.once("exit", (c) => reject(new Error(`the holder exited (${c}) before opening`)));
  });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  return { proc, opened, exited };
}

/** The process id a lock file names first. */
const lockPid = (dir: string) => readFileSync(path.join(dir, "pglite.lock"), "utf8").split(/\s/)[0];

describe("the embedded database's directory", () => {
  it("is refused to a second process while one has it open, naming that process; taken over once it is killed", { timeout: 90_000 }, async () => {
    const dir = dataDir();
    const first = holder(dir);
    try {
      await first.opened;
      const refused = await openDatabase({ dataDir: dir }).then(
        (h) => h.close().then(() => null),
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(DirectoryInUse);
      expect((refused as Error).message).toContain(`(pid ${first.proc.pid})`);
      expect((refused as Error).message).toMatch(/one process at a time/);
    } finally {
      first.proc.kill("SIGKILL");
      await first.exited;
    }
    // Killed, it left its lock behind: a lock whose process has ended is taken over.
    expect(lockPid(dir)).toBe(String(first.proc.pid));
    const handle = await openDatabase({ dataDir: dir });
    expect(lockPid(dir)).toBe(String(process.pid));
    await handle.close();
    expect(existsSync(path.join(dir, "pglite.lock"))).toBe(false);
  });

  it("a lock whose process ended is taken over though its pid was given to another process since", async () => {
    const dir = dataDir();
    // A process that runs (this one's parent), but not the one that wrote the lock: it started at another time.
    writeFileSync(path.join(dir, "pglite.lock"), `${process.ppid} 1\n`);
    const handle = await openDatabase({ dataDir: dir });
    expect(lockPid(dir)).toBe(String(process.pid));
    await handle.close();
  });

  it("a lock file that names no process (written halfway) is taken over", async () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, "pglite.lock"), "");
    const handle = await openDatabase({ dataDir: dir });
    expect(lockPid(dir)).toBe(String(process.pid));
    await handle.close();
  });
});

/** The pid of a process that ran and has ended. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid;

/** A process's start time as a lock names it (field 22 of /proc/<pid>/stat). */
const startOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
};

/** The takeover marker a process replacing the stale lock `stale` creates first (the nth, past ones of processes that ended). */
const marker = (dir: string, stale: string, n: number) =>
  path.join(dir, `pglite.lock.takeover.${createHash("sha256").update(stale).digest("hex").slice(0, 16)}.${n}`);

describe("the lock's takeover", () => {
  it("a lock naming this process's pid with another start time (a service restarted as the same pid, in a container) is stale, and written again", () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, "pglite.lock"), `${process.pid} 1\n`);
    const release = lockDataDir(dir);
    expect(readFileSync(path.join(dir, "pglite.lock"), "utf8")).toBe(`${process.pid} ${startOf(process.pid)}\n`);
    // Its own again (a development server's reload).
    lockDataDir(dir)();
    release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a takeover left halfway by a process killed in it does not hold the directory", () => {
    const dir = dataDir();
    const stale = `${deadPid()} 12345\n`;
    writeFileSync(path.join(dir, "pglite.lock"), stale);
    writeFileSync(marker(dir, stale, 0), `${deadPid()} 67890\n`);
    const release = lockDataDir(dir);
    expect(lockPid(dir)).toBe(String(process.pid));
    release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a stale lock another live process is replacing is left to it: refused, naming that process", () => {
    const dir = dataDir();
    const stale = `${deadPid()} 12345\n`;
    writeFileSync(path.join(dir, "pglite.lock"), stale);
    // A process that runs (this one's parent) has begun to replace it, and does not finish here.
    writeFileSync(marker(dir, stale, 0), `${process.ppid} ${startOf(process.ppid)}\n`);
    const refused = (() => {
      try {
        lockDataDir(dir)();
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(refused).toBeInstanceOf(DirectoryInUse);
    expect((refused as DirectoryInUse).pid).toBe(process.ppid);
    expect(readFileSync(path.join(dir, "pglite.lock"), "utf8")).toBe(stale);
    // Nothing of this process's left behind.
    expect(readdirSync(dir).sort()).toEqual(["pglite.lock", path.basename(marker(dir, stale, 0))].sort());
  });
});

/** The lock's module, as the racers import it. */
const LOCK_MODULE = path.join(process.cwd(), "lib/db/directory-lock.ts");

/**
 * A process that takes the lock in each round's directory the moment the round's barrier opens,
 * says whether it took it, and keeps it until told to release it. The barrier is a FIFO: opening
 * it to read blocks until the test opens it to write, which wakes every racer waiting at once.
 */
const RACER = `
  const { lockDataDir } = await import(${JSON.stringify(LOCK_MODULE)});
  const { closeSync, openSync } = await import("node:fs");
  const { createInterface } = await import("node:readline");
  let release = null;
  for await (const line of createInterface({ input: process.stdin })) {
    const round = JSON.parse(line);
    if (round.release) {
      release?.();
      release = null;
      console.log(JSON.stringify({ released: true }));
      continue;
    }
    console.log(JSON.stringify({ ready: true }));
    closeSync(openSync(round.barrier, "r"));
    try {
      release = lockDataDir(round.dir);
      console.log(JSON.stringify({ took: true }));
    } catch (e) {
      console.log(JSON.stringify({ took: false, error: e.name }));
    }
  }`;

type RacerSays = { ready?: true; released?: true; took?: boolean; error?: string };

/** A racer, and the lines it says one after another. */
function racer() {
  const proc: ChildProcess = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", RACER], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const said: RacerSays[] = [];
  let waiting: ((s: RacerSays) => void) | null = null;
  let failed: Error | null = null;
  let fail: ((e: Error) => void) | null = null;
  createInterface({ input: proc.stdout! }).on("line", (l) => {
    const s = JSON.parse(l) as RacerSays;
    if (waiting) {
      const w = waiting;
      waiting = fail = null;
      w(s);
    } else said.push(s);
  });
  proc.once("exit", (code) => {
    failed = new Error(`a racer exited (${code})`);
    fail?.(failed);
  });
  const next = () =>
    new Promise<RacerSays>((resolve, reject) => {
      if (said.length > 0) return resolve(said.shift()!);
      if (failed) return reject(failed);
      waiting = resolve;
      fail = reject;
    });
  const send = (message: object) => proc.stdin!.write(JSON.stringify(message) + "\n");
  const exited = new Promise<void>((resolve) => (proc.exitCode !== null ? resolve() : proc.once("exit", () => resolve())));
  return { proc, next, send, exited };
}

describe("processes started together on one directory", () => {
  const RACERS = 4;
  const ROUNDS = 100;

  it.each([
    ["no lock", false],
    ["the stale lock of a process that has ended", true],
  ])("exactly one takes it, with %s there", { timeout: 120_000 }, async (_, stale) => {
    const racers = Array.from({ length: RACERS }, racer);
    const barriers = dataDir();
    const dead = deadPid();
    try {
      const failures: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const dir = dataDir();
        if (stale) writeFileSync(path.join(dir, "pglite.lock"), `${dead} 12345\n`);
        const barrier = path.join(barriers, `round-${round}`);
        expect(spawnSync("mkfifo", [barrier]).status).toBe(0);
        for (const r of racers) r.send({ dir, barrier });
        for (const r of racers) expect(await r.next()).toEqual({ ready: true });
        // Every racer waits in the FIFO's open, or is about to (it stays open for writing until all have answered).
        const gate = await open(barrier, "w");
        const answers = await Promise.all(racers.map((r) => r.next())).finally(() => gate.close());
        const took = racers.filter((_, i) => answers[i]!.took);
        for (const a of answers) if (!a.took) expect(a.error).toBe("DirectoryInUse");
        if (took.length !== 1) failures.push(`round ${round}: ${took.length} took it`);
        else expect(lockPid(dir)).toBe(String(took[0]!.proc.pid));
        for (const r of racers) r.send({ release: true });
        for (const r of racers) expect(await r.next()).toEqual({ released: true });
        // Released, and no temporary file or takeover marker left behind.
        if (took.length === 1) expect(readdirSync(dir)).toEqual([]);
      }
      expect(failures, `${failures.length} of ${ROUNDS} rounds`).toEqual([]);
    } finally {
      for (const r of racers) r.proc.stdin!.end();
      await Promise.all(racers.map((r) => r.exited));
    }
  });
});
