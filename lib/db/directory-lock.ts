import { createHash, randomBytes } from "node:crypto";
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
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

/** How long a lock whose takeover another live process has begun is waited for before giving up. */
const PATIENCE_MS = 3_000;

/**
 * Takes `<dataDir>/pglite.lock` for this process, or throws `DirectoryInUse` naming the process
 * that holds it. A lock whose process has ended (killed, crashed), or that names none, is taken
 * over. This process's own lock is its own (a development server's reload opens the database
 * again). Answers the release, which also runs when the process exits, and removes the lock
 * only while it is still this process's.
 *
 * Processes started together on one directory (two `npm start`s, a seed beside a starting
 * service) take it one at a time, because the lock file is only ever changed in steps the
 * file system makes atomic:
 *
 * - It is written whole before it exists: this process's line (`<pid> <started>`) goes into a
 *   temporary file of its own (`pglite.lock.<pid>.<random>`), which `link()` then puts at
 *   `pglite.lock` or fails with EEXIST when a lock is there. Exactly one of several processes'
 *   links succeeds, and no process ever reads a lock half-written (created, its line not yet
 *   in it), which it would have taken for one that names no process and taken over.
 * - A stale lock is replaced, never removed: `rename()` of the temporary file over it swaps the
 *   one file for the other, so there is no moment without a lock in which a third process's
 *   `link()` could succeed beside it.
 * - One process replaces a given stale lock, S. Before the rename a process creates (`link()`,
 *   exclusive) a takeover marker named after S's contents, `pglite.lock.takeover.<hash of S>.0`,
 *   reads the lock again, and renames only if it still is S. Of two processes that both read S,
 *   only one creates the marker; the other finds it naming a live process and waits for it to
 *   finish (then finds its lock, live: DirectoryInUse). One that read S long ago and creates
 *   the marker after the first has finished and removed it finds the lock is no longer S, and
 *   looks again. While the lock is S nothing else changes it: S's process has ended, and every
 *   other change to S goes through its marker. S never comes back once replaced: only its
 *   process, which has ended, writes its line (a lock naming no process, which this code never
 *   writes, is the one exception, and harmless: its replacement names a live one). So the
 *   moment the marker is held and the lock read as S lasts until the rename.
 * - A process killed while holding a marker would otherwise leave S untakeable: a marker that
 *   names a process that has ended is passed over for the next one (`….1`, `….2`), created the
 *   same way. Markers are only removed once the lock is no longer S (by the process that
 *   replaced it, or one that found it replaced), or by a live process whose rename failed, so a marker passed over as its process's has
 *   ended cannot be replaced meanwhile by a live one that would also rename.
 * - A lock that disappears between a failed `link()` and its reading was released: link again.
 * - A lock naming this process's pid but another start time was left by an earlier process
 *   given the same pid (a container's service restarted as pid 1): stale, and replaced with
 *   this process's line, since another process would take a lock naming it stale too.
 *
 * The temporary file and every marker this process creates are removed on every path, thrown
 * or not (a process killed in between leaves one behind, harmless: its name is its own).
 */
export function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, "pglite.lock");
  const mine = `${process.pid} ${startedAt(process.pid) ?? ""}`.trim() + "\n";
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}`;
  writeFileSync(temp, mine, { flag: "wx" });
  try {
    take(dataDir, file, temp, mine);
  } finally {
    removeIfThere(temp);
  }
  const release = () => {
    process.off("exit", release);
    // Only while it is still this process's: a lock is changed by others only once its process has ended.
    try {
      if (contentsOf(file) === mine) removeIfThere(file);
    } catch {
      // unreadable now: left for the next process, which takes it over once this one has ended
    }
  };
  process.on("exit", release);
  return release;
}

/** Puts this process's lock (written in `temp`) at `file`, or throws `DirectoryInUse`. */
function take(dataDir: string, file: string, temp: string, mine: string): void {
  const giveUpAt = Date.now() + PATIENCE_MS;
  for (;;) {
    try {
      linkSync(temp, file);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const found = contentsOf(file);
    if (found === mine) return; // this process's own
    const holder = found === null ? null : parse(found);
    if (holder !== null && holder.pid !== process.pid && holds(holder)) throw new DirectoryInUse(dataDir, holder.pid);
    // Released as it was read (link again), or stale.
    const outcome = found === null ? "changed" : replaceStale(file, temp, found);
    if (outcome === "replaced") return;
    // Others taking and releasing it as fast as this process looks, or another live process
    // replacing a stale one (a matter of microseconds): look again, for a while.
    if (Date.now() >= giveUpAt) throw new DirectoryInUse(dataDir, outcome === "changed" ? (holder?.pid ?? 0) : outcome.replacing);
    if (outcome !== "changed") sleep(1);
  }
}

/**
 * Replaces the stale lock whose contents were `stale` with this process's (`temp`, consumed on
 * success), through the takeover markers `lockDataDir` describes. Answers "replaced", "changed"
 * (the lock is no longer `stale`: look again) or the live process replacing it.
 */
function replaceStale(file: string, temp: string, stale: string): "replaced" | "changed" | { replacing: number } {
  const prefix = `${file}.takeover.${createHash("sha256").update(stale).digest("hex").slice(0, 16)}.`;
  for (let n = 0; ; n++) {
    const marker = prefix + n;
    try {
      linkSync(temp, marker);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const by = contentsOf(marker);
      // Removed as it was read: the lock is no longer `stale`, or its taker's rename failed.
      if (by === null) return "changed";
      const taker = parse(by);
      if (taker !== null && holds(taker)) return { replacing: taker.pid };
      continue; // its process ended halfway: the next one
    }
    try {
      if (contentsOf(file) !== stale) return "changed";
      renameSync(temp, file);
      // Markers passed over, of processes that ended: the lock they were for is gone.
      for (let m = 0; m < n; m++) removeIfThere(prefix + m);
      return "replaced";
    } finally {
      removeIfThere(marker);
    }
  }
}

/** A lock's process: its id, and when it started where that was known (`<pid> <started>`; a pid alone before). */
type Holder = { pid: number; started: string | null };

/** The process a lock's contents name, or null for contents that name none (a lock written halfway by an earlier version, or emptied by a crash). */
function parse(contents: string): Holder | null {
  const [pidText, started] = contents.trim().split(/\s+/);
  const pid = Number(pidText);
  return Number.isSafeInteger(pid) && pid > 0 ? { pid, started: started || null } : null;
}

/** A file's contents, or null where there is none. */
function contentsOf(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

function removeIfThere(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
