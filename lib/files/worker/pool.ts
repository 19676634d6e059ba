import "server-only";
import { existsSync } from "node:fs";
import path from "node:path";
import { fork, type ChildProcess } from "node:child_process";
import { getEnv } from "../../env";
import { errorText, log } from "../../log";
import type { ExportInput } from "../export/types";
import { FileError, type FileKind } from "../types";
import { BUILT_WORKER, bundleFileWorker, bundleIsFresh, CACHED_WORKER } from "./bundle";
import { READY, type ExportFormat, type InspectedSummary, type PreparedActivity, type Reply, type StoredExportInput, type Task, type Warmed, type WireError } from "./protocol";
import { runTask } from "./run-task";

export type { ExportFormat, PreparedActivity, StoredExportInput } from "./protocol";

// Parsing a large GPX takes seconds and a FIT export about one: on the request thread that
// would stall every request the process serves. The work runs in worker processes instead, one
// by default (the API keeps a core, file work gets the other).
//
// Processes, not worker threads: a worker thread's heap limit is best-effort. For some shapes of
// allocation (one growing Map, one huge array; seen on Node 24.21) V8 aborts the whole process at
// the thread's limit instead of ending the thread (nodejs/node#47224), so one hostile file could
// end every request the server was serving, as it ended a test run here. A child process that aborts takes only its own task.
// The price is a copy of each file over the IPC channel (V8's serializer, about 10 ms for 25 MiB)
// and the memory of a second Node.js process while one runs.

/** The pool has more waiting than it accepts: nothing is wrong with the file, try again later. */
export class FileWorkBusyError extends Error {
  readonly retriable = true;
  constructor() {
    super("The service is busy reading other files; try again shortly.");
    this.name = "FileWorkBusyError";
  }
}

/** The worker died or ran out of time on a task that is not a user's file (an export): the service's fault. */
export class FileWorkerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FileWorkerError";
  }
}

/**
 * The worker was stopped from outside (a kill the pool did not send: an operator, a service
 * manager, the kernel's OOM killer) during a task. Nothing says the request caused it, and the
 * worker is replaced: the same request can succeed shortly (`retriable`: an export answers 503
 * with Retry-After, not 500). An upload still counts it (process-upload.ts): the OOM killer stops
 * a worker that the file itself exhausted with the same SIGKILL.
 */
export class FileWorkerStoppedError extends FileWorkerError {
  readonly retriable = true;
}

/** Failed starts in a row, after a worker has run, before tasks run in-process for good; the pause before each retry doubles from RESTART_PAUSE_MS. */
const MAX_START_FAILURES = 5;
const RESTART_PAUSE_MS = 250;

/**
 * A file that exhausts the worker's memory or time, or kills it, fails as the file's fault: the
 * worker runs nothing but that file, so trying again would end the same way.
 */
const OVER_LIMITS = "The file could not be read within the service's limits: it is too large or too complex.";

export type PoolOptions = {
  /** Worker processes; 0 runs every task on the calling thread. */
  size: number;
  /** The worker module's path; throwing (no bundle, no esbuild) makes the pool run tasks in-process. */
  workerFile: () => Promise<string>;
  taskTimeoutMs: number;
  /** Tasks waiting for a worker beyond which new ones are refused (FileWorkBusyError). */
  maxQueuedTasks: number;
  /** Bytes of input waiting beyond which new tasks are refused: each waiting upload holds its whole file. */
  maxQueuedBytes: number;
  /** The worker's V8 heap limit (--max-old-space-size): a file that needs more fails, alone. */
  maxHeapMb: number;
  /**
   * A worker that has taken a task of this many input bytes or more is ended once it answers,
   * and a new one takes the next task: V8 keeps the heap a large file made it grow (a 25 MiB GPX
   * left a worker at about 300 MB resident, most of it free heap), and only a new process gives
   * that memory back.
   */
  recycleAfterBytes: number;
  /** Warm-up steps each new worker runs between its first tasks (./warm-up.ts); 0 for none. */
  warmUpSteps: number;
};

type Job = {
  id: number;
  task: Task;
  bytes: number;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  /** How many answers (ANSWERS) went ahead of it while it waited. */
  passed: number;
};

type Slot = { worker: ChildProcess; exited: Promise<void>; job: Job | null; timer: NodeJS.Timeout | null; online: boolean; stderr: string };

export type PoolMode = "idle" | "worker" | "in-process";

export class FileWorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private queuedBytes = 0;
  private nextId = 1;
  private file: Promise<string | null> | null = null;
  private fallback = false;
  /** Whether a worker of this pool has ever come up (said READY): then a failed start is passing. */
  private everOnline = false;
  /** Starts that failed (the worker died before READY) since a worker last came up. */
  private startFailures = 0;
  /** The pause before the next start after a failed one; no worker is started meanwhile. */
  private restartTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private draining = false;
  private retiring = false;
  /** Workers that died while working, and so were replaced (for tests and logs). */
  replaced = 0;
  /** Workers ended after a large task (`recycleAfterBytes`), their memory given back. */
  recycled = 0;
  /** Workers whose warm-up ended without an error (tests). */
  warmed = 0;
  /** The worker module once resolved: the built one, or a bundle made on demand. */
  private resolvedFile: string | null = null;

  constructor(private readonly opts: PoolOptions) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether this pool runs a bundle made on demand whose sources have changed since (`next dev`, tests). */
  usesStaleBundle(): boolean {
    const f = this.resolvedFile;
    return f !== null && f.endsWith(CACHED_WORKER) && !bundleIsFresh(process.cwd(), f);
  }

  /** The worker processes' ids (tests). */
  get pids(): number[] {
    return this.slots.flatMap((s) => (s.worker.pid === undefined ? [] : [s.worker.pid]));
  }

  /** Where tasks run: "idle" until the first task decides. */
  get mode(): PoolMode {
    if (this.fallback || this.opts.size === 0) return "in-process";
    return this.slots.some((s) => s.online) ? "worker" : "idle";
  }

  /** Tasks given and not yet handed to a worker. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Whether a task given now would start at once in a worker process, off the calling thread:
   * workers are up, one of them is free and nothing waits. (Work that is only worth doing when
   * it costs nobody a wait, such as an upload's early parse, asks this first.)
   */
  get hasFreeWorker(): boolean {
    return !this.closed && !this.fallback && this.queue.length === 0 && this.slots.some((s) => s.online && s.job === null);
  }

  run(task: Task, bytes = 0): Promise<unknown> {
    if (this.closed) return Promise.reject(new FileWorkerError("The file worker pool is closed."));
    if (this.queue.length >= this.opts.maxQueuedTasks || (this.queue.length > 0 && this.queuedBytes + bytes > this.opts.maxQueuedBytes)) {
      return Promise.reject(new FileWorkBusyError());
    }
    return new Promise((resolve, reject) => {
      const job: Job = { id: this.nextId++, task, bytes, resolve, reject, passed: 0 };
      // An export answers a person waiting on a download; reading an upload is background
      // work the processor does in turns. So an export goes ahead of the uploads waiting, but
      // no upload is passed more than MAX_PASSED times: a steady stream of exports never keeps
      // one from being read.
      let at = this.queue.length;
      if (ANSWERS.has(task.op)) {
        at = 0;
        this.queue.forEach((j, i) => {
          if (ANSWERS.has(j.task.op) || j.passed >= MAX_PASSED) at = i + 1;
        });
        for (let i = at; i < this.queue.length; i++) this.queue[i]!.passed++;
      }
      this.queue.splice(at, 0, job);
      this.queuedBytes += bytes;
      void this.pump();
    });
  }

  /** Ends the workers; waiting tasks are refused. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    for (const job of this.queue.splice(0)) job.reject(new FileWorkerError("The file worker pool is closed."));
    this.queuedBytes = 0;
    const slots = this.slots.splice(0);
    for (const s of slots) {
      if (s.timer) clearTimeout(s.timer);
      s.job?.reject(new FileWorkerError("The file worker pool is closed."));
      s.job = null;
    }
    await Promise.all(slots.map((s) => end(s)));
  }

  private take(): Job | undefined {
    const job = this.queue.shift();
    if (job) this.queuedBytes -= job.bytes;
    return job;
  }

  /** The worker module, resolved once; null when there is none (tasks then run in-process). */
  private workerFile(): Promise<string | null> {
    this.file ??= this.opts.workerFile().then((f) => (this.resolvedFile = f)).catch((e: unknown) => {
      log.warn("file worker unavailable: reading files on the request thread", { error: errorText(e) });
      return null;
    });
    return this.file;
  }

  /**
   * Starts the workers before the first task, so that they warm up (./warm-up.ts) while nothing
   * waits for them: the first upload after a start is then read about as fast as the rest.
   */
  prewarm(): void {
    if (this.closed || this.fallback || this.opts.size === 0) return;
    void this.workerFile().then((file) => {
      if (file === null) this.fallback = true;
      else if (!this.closed && !this.restartTimer) while (this.slots.length < this.opts.size) this.spawn(file);
    });
  }

  private async pump(): Promise<void> {
    if (this.queue.length === 0) return;
    if (!this.fallback && this.opts.size > 0) {
      const file = await this.workerFile();
      if (file === null) this.fallback = true;
      else {
        if (this.closed) return;
        this.dispatch(file);
        return;
      }
    }
    this.runInProcess();
  }

  private dispatch(file: string): void {
    for (;;) {
      if (this.fallback) return this.runInProcess();
      let slot = this.slots.find((s) => s.job === null);
      if (!slot && this.slots.length < this.opts.size && !this.restartTimer) slot = this.spawn(file);
      if (!slot) return;
      const job = this.take();
      if (!job) return;
      this.assign(slot, job);
    }
  }

  private runInProcess(): void {
    if (this.draining) return;
    this.draining = true;
    // One task per turn of the event loop: requests are served between files at least.
    const next = () => {
      const job = this.take();
      if (!job) {
        this.draining = false;
        return;
      }
      try {
        job.resolve(runTask(job.task));
      } catch (e) {
        job.reject(e instanceof Error ? e : new Error(String(e)));
      }
      setImmediate(next);
    };
    setImmediate(next);
  }

  /** Ends the workers once the tasks already given are done. */
  retire(): void {
    this.retiring = true;
    this.closeIfRetired();
  }

  private closeIfRetired(): void {
    if (this.retiring && !this.closed && this.queue.length === 0 && this.slots.every((s) => s.job === null)) void this.close();
  }

  private spawn(file: string): Slot {
    const worker = fork(file, [String(this.opts.warmUpSteps)], {
      // Not the server's own flags (a loader, --inspect): only the heap limit.
      execArgv: [`--max-old-space-size=${this.opts.maxHeapMb}`],
      serialization: "advanced",
      stdio: ["ignore", "inherit", "pipe", "ipc"],
    });
    const slot: Slot = { worker, exited: new Promise((r) => worker.once("exit", () => r())), job: null, timer: null, online: false, stderr: "" };
    // Never what keeps a process alive: referenced only while it holds a task someone awaits.
    unref(slot);
    this.slots.push(slot);
    // The last words of a worker that dies (V8's "heap out of memory"), for the log; bounded.
    worker.stderr?.setEncoding("utf8");
    worker.stderr?.on("data", (chunk: string) => (slot.stderr = (slot.stderr + chunk).slice(-2048)));
    worker.on("message", (message: Reply | Warmed | typeof READY) => {
      if (message === READY) {
        if (this.slots.every((s) => !s.online)) log.info("file worker started", { file, pid: worker.pid });
        slot.online = true;
        this.everOnline = true;
        this.startFailures = 0;
      } else if ("warmed" in message) {
        if (message.error === undefined) this.warmed++;
        else log.warn("file worker warm-up failed", { pid: worker.pid, error: message.error });
      } else this.settle(slot, message);
    });
    let failure: Error | null = null;
    worker.on("error", (e) => {
      failure = e;
    });
    worker.on("exit", (code, signal) => this.died(slot, code, signal, failure, file));
    return slot;
  }

  private assign(slot: Slot, job: Job): void {
    slot.job = job;
    ref(slot);
    slot.timer = setTimeout(() => {
      if (slot.job !== job) return;
      // Out of the pool at once, so nothing is given to a worker that is being ended.
      this.slots.splice(this.slots.indexOf(slot), 1);
      this.release(slot);
      this.replaced++;
      log.warn("file worker task ran out of time: worker ended", { op: job.task.op, timeoutMs: this.opts.taskTimeoutMs });
      job.reject(this.overLimits(job.task));
      void end(slot).then(() => this.redispatch());
    }, this.opts.taskTimeoutMs);
    slot.timer.unref();
    slot.worker.send({ ...job.task, id: job.id });
  }

  private settle(slot: Slot, reply: Reply): void {
    const job = slot.job;
    if (!job || job.id !== reply.id) return;
    this.release(slot);
    if (job.bytes >= this.opts.recycleAfterBytes) {
      // Out of the pool at once, so the next task goes to a new worker.
      this.slots.splice(this.slots.indexOf(slot), 1);
      this.recycled++;
      void end(slot);
    }
    if (reply.ok) job.resolve(reply.result);
    else job.reject(reviveError(reply.error));
    this.redispatch();
  }

  private redispatch(): void {
    if (this.file) void this.file.then((f) => f && !this.closed && this.dispatch(f));
    this.closeIfRetired();
  }

  private release(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
    unref(slot);
  }

  private died(slot: Slot, code: number | null, signal: NodeJS.Signals | null, failure: Error | null, file: string): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return; // closed, or ended for its time
    this.slots.splice(index, 1);
    const job = slot.job;
    this.release(slot);
    const lastWords = slot.stderr.trim().split("\n").slice(-3).join(" | ") || undefined;
    if (!slot.online) {
      // It never ran a line of ours, so its task did not run: back to the head of the queue.
      if (job) this.queue.unshift(job);
      this.queuedBytes += job?.bytes ?? 0;
      this.startFailures++;
      if (this.everOnline && this.startFailures < MAX_START_FAILURES && !this.closed) {
        // Workers ran here before: this start failed for a passing reason (killed while it
        // loaded, a fork refused under load). Start another after a pause; reading files on the
        // request thread for good would take away their heap limit and their time limit.
        const delayMs = RESTART_PAUSE_MS * 2 ** (this.startFailures - 1);
        log.warn("file worker did not start: starting another", { file, code, signal, delayMs, error: failure ? errorText(failure) : lastWords });
        this.restartTimer = setTimeout(() => {
          this.restartTimer = null;
          if (!this.closed) this.dispatch(file);
          this.closeIfRetired();
        }, delayMs);
        return;
      }
      // None ever started, or none would again: the bundle is broken or processes cannot start
      // here. Its task and the rest run in-process.
      log.warn("file worker could not start: reading files on the request thread", { file, code, signal, starts: this.startFailures, error: failure ? errorText(failure) : lastWords });
      this.fallback = true;
      this.runInProcess();
      return;
    }
    if (job) {
      this.replaced++;
      const outOfMemory = /heap out of memory|Allocation failed/i.test(slot.stderr);
      const filesFault = diedOfItsTask(code, signal, outOfMemory);
      log.warn("file worker died on a task: replaced", { op: job.task.op, code, signal, outOfMemory, filesFault, error: failure ? errorText(failure) : lastWords });
      job.reject(filesFault ? this.overLimits(job.task) : new FileWorkerStoppedError("The service was interrupted while it worked on this file; try again shortly."));
    }
    if (!this.closed) this.dispatch(file);
    this.closeIfRetired();
  }

  private overLimits(task: Task): Error {
    return task.op === "prepare" || task.op === "prepareUpload" ? new FileError("invalid_file", OVER_LIMITS) : new FileWorkerError(`The file worker could not finish the ${task.op} task.`);
  }
}

/**
 * Whether a worker's death on a task was the task's doing: it ran out of its heap, or crashed
 * (an abort, a fault, a non-zero exit). A stop from outside (SIGTERM, SIGINT or SIGHUP from a
 * service manager or a terminal, a SIGKILL the pool did not send) says nothing about the file,
 * whose upload is then tried again rather than failed as too large.
 */
export function diedOfItsTask(code: number | null, signal: NodeJS.Signals | null, outOfMemory: boolean): boolean {
  if (outOfMemory) return true;
  if (signal) return !["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGKILL"].includes(signal);
  return code !== 0;
}

function ref(slot: Slot): void {
  slot.worker.ref();
  slot.worker.channel?.ref();
}

function unref(slot: Slot): void {
  slot.worker.unref();
  slot.worker.channel?.unref();
}

/** Kills a worker and waits until it is gone. */
async function end(slot: Slot): Promise<void> {
  if (slot.worker.exitCode === null && slot.worker.signalCode === null) slot.worker.kill("SIGKILL");
  await slot.exited;
}

/** A FileError comes back as one (same code and message); anything else as an Error with its message. */
function reviveError(e: WireError): Error {
  if (e.code) return new FileError(e.code, e.message);
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}

/** The worker module: the one `npm run build` made when serving a build, else bundled on demand and kept while its sources stay unchanged. */
export async function resolveWorkerFile(): Promise<string> {
  // The server runs in the app's directory (scripts/serve.mjs). Not for Next.js's file tracing:
  // a path from the working directory would have it trace the whole project.
  const root = process.cwd();
  const built = path.join(/* turbopackIgnore: true */ root, BUILT_WORKER);
  if (process.env.NODE_ENV === "production" && existsSync(/* turbopackIgnore: true */ built)) return built;
  const cached = path.join(/* turbopackIgnore: true */ root, CACHED_WORKER);
  if (!bundleIsFresh(root, cached)) await bundleFileWorker(root, cached);
  return cached;
}

/** The tasks a request waits on (a download), which go ahead of the uploads' reading in the queue. */
const ANSWERS: ReadonlySet<Task["op"]> = new Set(["export", "exportStored", "inspect"]);
/** How many of those a waiting upload lets go ahead of it, at most. */
const MAX_PASSED = 8;

export const DEFAULT_POOL_OPTIONS: Omit<PoolOptions, "size"> = {
  workerFile: () => resolveWorkerFile(),
  taskTimeoutMs: 60_000,
  maxQueuedTasks: 1_000,
  maxQueuedBytes: 1024 * 1024 * 1024,
  // GPX and TCX are read as a stream (a 16 MiB GPX within 64 MB of heap), but the FIT decoder
  // holds every message of the file as an object: 1 GiB leaves room for the largest FIT upload,
  // and a hostile file stops there, not at the machine's limit.
  maxHeapMb: 1024,
  recycleAfterBytes: 8 * 1024 * 1024,
  // Twelve reads of a 20-minute run, about 0.3 s of one core: measured in new processes on the
  // bench machine, the first 4-hour ride then took 85–135 ms instead of 220–290 (./warm-up.ts).
  warmUpSteps: 12,
};

/**
 * The process's one pool, on globalThis: Next.js bundles this module into several chunks (the
 * instrumentation that runs the upload processor, each route that exports), and every copy must
 * use the same pool. A copy that made its own and retired the others' would close the pool the
 * upload processor holds ("The file worker pool is closed", every upload failing).
 */
const SHARED = Symbol.for("athlete-activity-service.file-worker-pool");
type Shared = { pool: FileWorkerPool; checkedAt: number };
const holder = globalThis as { [SHARED]?: Shared };

/** How often `next dev` and the tests look whether the worker's sources changed since its bundle. */
const STALE_CHECK_MS = 2_000;

function pool(): FileWorkerPool {
  let cur = holder[SHARED];
  if (cur && !cur.pool.isClosed && process.env.NODE_ENV !== "production" && Date.now() - cur.checkedAt > STALE_CHECK_MS) {
    // Under `next dev` a change to lib/files gets a new pool, which bundles the worker again;
    // the old one's workers end once their tasks are done.
    cur.checkedAt = Date.now();
    if (cur.pool.usesStaleBundle()) {
      cur.pool.retire();
      cur = undefined;
    }
  }
  if (!cur || cur.pool.isClosed) {
    cur = { pool: new FileWorkerPool({ ...DEFAULT_POOL_OPTIONS, size: getEnv().fileWorkers }), checkedAt: Date.now() };
    holder[SHARED] = cur;
  }
  return cur.pool;
}

/** Starts the file workers now, so they are warm when the first file comes (the server's start). */
export function prewarmFileWorkers(): void {
  pool().prewarm();
}

/**
 * Parses a file and encodes each activity's streams as stored (lib/files/stream-codec.ts) off the
 * request thread. Rejects with the same FileError parseActivityFile throws for a bad file, and with
 * FileError `invalid_file` when the file exhausts the worker's memory (1 GiB) or time (60 s), or
 * kills it. Rejects with FileWorkBusyError (retriable) when too much is already waiting.
 */
export async function prepareActivitiesOffThread(content: Uint8Array, kind: FileKind): Promise<PreparedActivity[]> {
  return (await pool().run({ op: "prepare", content, kind }, content.byteLength)) as PreparedActivity[];
}

/**
 * prepareActivitiesOffThread for an upload's stored bytes (`upload_files.bytes`, gzip or not):
 * the worker also checks and decompresses them (inspectUpload), so no step of reading a file
 * runs on the request thread. A file inspectUpload refuses fails as FileError `invalid_file`
 * with its words.
 */
export async function prepareUploadOffThread(bytes: Uint8Array, kind: FileKind): Promise<PreparedActivity[]> {
  return (await pool().run({ op: "prepareUpload", bytes, kind }, bytes.byteLength)) as PreparedActivity[];
}

/**
 * inspectUpload off the request thread, for a gzip upload that zlib's one-stream gunzip refused
 * (junk after its end, damage): reading it member by member is up to 25 MiB of inflating and
 * checksums, which one appended byte would otherwise put on the request thread.
 */
export async function inspectUploadInWorker(bytes: Uint8Array): Promise<InspectedSummary> {
  return (await pool().run({ op: "inspect", bytes }, bytes.byteLength)) as InspectedSummary;
}

/** A generated file (exportFit, exportGpx or exportTcx) made off the request thread. */
export async function exportOffThread(format: ExportFormat, input: ExportInput): Promise<Uint8Array> {
  return (await pool().run({ op: "export", format, input }, input.streams.size * 80)) as Uint8Array;
}

/**
 * The same from a stored activity, its streams still encoded (`activity_streams.data`): the
 * worker decodes them, so the request thread neither decodes nor copies tens of thousands of samples.
 */
export async function exportStoredOffThread(format: ExportFormat, input: StoredExportInput): Promise<Uint8Array> {
  // The channel's serializer sends only a view's own bytes, even of a Buffer inside a larger one.
  return (await pool().run({ op: "exportStored", format, input }, input.streamsData.byteLength)) as Uint8Array;
}

/** Ends the shared pool's workers (tests; a server never needs to: idle workers do not hold it open). */
export async function closeFileWorkers(): Promise<void> {
  const p = holder[SHARED]?.pool;
  delete holder[SHARED];
  await p?.close();
}

/** Whether the shared pool has a worker process free now, with nothing waiting (FileWorkerPool.hasFreeWorker). */
export function fileWorkerIsFree(): boolean {
  return holder[SHARED]?.pool.hasFreeWorker ?? false;
}

/**
 * Runs a task on the shared pool as given (tests: a long `spin` keeps its worker busy until the
 * pool is closed; one of `bytes` up to DEFAULT_POOL_OPTIONS.maxQueuedBytes fills its queue).
 */
export function runOnSharedPool(task: Task, bytes = 0): Promise<unknown> {
  return pool().run(task, bytes);
}

/** Where the shared pool runs tasks (tests check that it is a worker). */
export function fileWorkMode(): PoolMode {
  return holder[SHARED]?.pool.mode ?? "idle";
}
