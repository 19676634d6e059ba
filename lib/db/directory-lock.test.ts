import { afterAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { openDatabase } from "./client";
import { DirectoryInUse } from "./directory-lock";

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
