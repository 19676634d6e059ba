import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";

/**
 * The embedded database's directory is open in another process. PGlite keeps the database in
 * that process's memory and writes it back to the directory on its own terms: two processes on
 * one directory each see only their own writes, lose the other's, and can leave it unreadable.
 */
export class DirectoryInUse extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The embedded database in ${dataDir} is open in another process (pid ${pid}): an embedded database can be opened by one process at a time. ` +
        "Stop that process first, give this one its own DATA_DIR, or use PostgreSQL (DATABASE_URL).",
    );
    this.name = "DirectoryInUse";
  }
}

/** Whether a process with this id runs (one of another user's answers EPERM, and runs). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * When a process started, in clock ticks since boot (field 22 of Linux's /proc/<pid>/stat), or
 * null where that cannot be read (another system). With the pid it names one process: a pid is
 * reused once its process has ended, and a lock left by a killed service would otherwise hold
 * the directory for whatever unrelated process was given its number later.
 */
function startedAt(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command's name (field 2) is in parentheses and may hold spaces: count from after it.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether the process a lock names still runs: its pid, and where it was written its start time too. */
function holds(holder: Holder): boolean {
  if (!running(holder.pid)) return false;
  const now = holder.started === null ? null : startedAt(holder.pid);
  return now === null || now === holder.started;
}

/**
 * Takes `<dataDir>/pglite.lock` for this process, or throws `DirectoryInUse` naming the process
 * that holds it. A lock whose process has ended (killed, crashed) is taken over. This process's
 * own lock is its own (a development server's reload opens the database again). Answers the
 * release, which also runs when the process exits.
 */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, "pglite.lock");
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(file, "wx");
      try {
        writeSync(fd, `${process.pid} ${startedAt(process.pid) ?? ""}`.trim() + "\n");
      } finally {
        closeSync(fd);
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = holderOf(file);
      if (holder?.pid === process.pid) break;
      if (holder !== null && holds(holder)) throw new DirectoryInUse(dataDir, holder.pid);
      // Two processes that find the same stale lock at once: one makes the file again first,
      // and the other, on its next attempt, finds that one running.
      if (attempt > 0) throw new DirectoryInUse(dataDir, holder?.pid ?? 0);
      try {
        unlinkSync(file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
      }
    }
  }
  const release = () => {
    process.off("exit", release);
    if (holderOf(file)?.pid !== process.pid) return;
    try {
      unlinkSync(file);
    } catch {
      // gone already
    }
  };
  process.on("exit", release);
  return release;
}

/** A lock's process: its id, and when it started where that was known (`<pid> <started>`; a pid alone before). */
type Holder = { pid: number; started: string | null };

/** The process a lock file names, or null for one that names none (written halfway). */
function holderOf(file: string): Holder | null {
  try {
    const [pidText, started] = readFileSync(file, "utf8").trim().split(/\s+/);
    const pid = Number(pidText);
    return Number.isSafeInteger(pid) && pid > 0 ? { pid, started: started || null } : null;
  } catch {
    return null;
  }
}
