import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { inspectUpload } from "../detect";
import { exportFit, exportGpx, exportTcx } from "../export/index";
import { parseActivityFile } from "../parse";
import { decodeStreams, encodeStreams } from "../stream-codec";
import { syntheticActivity } from "../synthetic";
import { SAMPLES_DIR } from "../testing/samples";
import { FileError, STREAM_KEYS, type FileKind } from "../types";
import { bundleFileWorker, bundleIsFresh } from "./bundle";
import { errorToResponse } from "../../http/api-route";
import {
  closeFileWorkers,
  DEFAULT_POOL_OPTIONS,
  diedOfItsTask,
  exportOffThread,
  exportStoredOffThread,
  inspectUploadInWorker,
  FileWorkBusyError,
  FileWorkerError,
  FileWorkerPool,
  FileWorkerStoppedError,
  fileWorkMode,
  prepareActivitiesOffThread,
  prepareUploadOffThread,
  type PoolOptions,
} from "./pool";

// Vite sets BASE_URL to "/" in tests; the settings need a URL.
process.env.BASE_URL = "http://localhost:3000";

const read = (p: string) => new Uint8Array(readFileSync(path.join(SAMPLES_DIR, p)));
const root = path.resolve(__dirname, "../../..");

const pools: FileWorkerPool[] = [];
/** A pool of its own; its workers skip the warm-up unless told (the shared pool's tests keep it). */
function testPool(opts: Partial<PoolOptions> = {}) {
  const p = new FileWorkerPool({ ...DEFAULT_POOL_OPTIONS, size: 1, warmUpSteps: 0, ...opts });
  pools.push(p);
  return p;
}
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  await closeFileWorkers();
});

/** What the request thread would compute itself. */
function inProcess(content: Uint8Array, kind: FileKind) {
  return parseActivityFile(content, kind).map(({ streams, ...rest }) => ({
    ...rest,
    streamsSize: streams.size,
    streamKeys: STREAM_KEYS.filter((k) => streams[k] !== undefined),
    streamsData: encodeStreams(streams),
  }));
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a rejection");
}

describe("prepareActivitiesOffThread", () => {
  const files: [string, FileKind][] = [
    ["fit/garmin-edge-500-activity.fit", "fit"],
    ["fit/activity-small-fenix2-run.fit", "fit"],
    ["fit/sample-activity-indoor-trainer.fit", "fit"],
    ["gpx/blue_hills.gpx", "gpx"],
    ["gpx/missing_hr.gpx", "gpx"],
    ["tcx/tour_hr.tcx", "tcx"],
    ["tcx/garmin_connect.tcx", "tcx"],
  ];
  for (const [file, kind] of files) {
    it(`${file}: the same activities, streams and bytes as in-process`, async () => {
      const got = await prepareActivitiesOffThread(read(file), kind);
      expect(fileWorkMode()).toBe("worker");
      const want = inProcess(read(file), kind);
      expect(got.length).toBe(want.length);
      expect(got).toEqual(want);
      // And the stored bytes decode to the parsed streams.
      expect(decodeStreams(got[0]!.streamsData).size).toBe(parseActivityFile(read(file), kind)[0]!.streams.size);
      expect(got[0]!.startTime).toBeInstanceOf(Date);
    });
  }

  const bad: [string, Uint8Array, FileKind][] = [
    ["a valid FIT file with no activity", read("other/WorkoutIndividualSteps.fit"), "fit"],
    ["a GPX with an empty track", read("gpx/empty_trk.gpx"), "gpx"],
    ["a truncated FIT file", read("fit/garmin-edge-500-activity.fit").subarray(0, 5000), "fit"],
    ["cut XML", read("tcx/sample.tcx").subarray(0, 3000), "tcx"],
    ["bytes that are no format", new TextEncoder().encode("hello, world"), "gpx"],
  ];
  for (const [what, bytes, kind] of bad) {
    it(`${what}: the same FileError (code and message) as in-process`, async () => {
      let want: FileError | undefined;
      try {
        parseActivityFile(bytes, kind);
      } catch (e) {
        want = e as FileError;
      }
      expect(want).toBeInstanceOf(FileError);
      const got = await rejection(prepareActivitiesOffThread(bytes, kind));
      expect(got).toBeInstanceOf(FileError);
      expect({ code: (got as FileError).code, message: got.message }).toEqual({ code: want!.code, message: want!.message });
    });
  }

  it("sends only a view's own bytes: a Buffer inside Node's shared pool reads as itself", async () => {
    const small = Buffer.from(readFileSync(path.join(SAMPLES_DIR, "gpx/missing_hr.gpx")));
    expect(small.buffer.byteLength).toBeGreaterThan(small.byteLength);
    expect(await prepareActivitiesOffThread(small, "gpx")).toEqual(inProcess(small, "gpx"));
    expect(small.byteLength).toBe(4443);
  });
});

describe("the shared pool", () => {
  it("is one for every copy of this module: a copy loaded later (another Next.js chunk) never closes the pool another copy uses", async () => {
    vi.resetModules();
    const a = await import("./pool");
    vi.resetModules();
    const b = await import("./pool");
    expect(a.prepareActivitiesOffThread).not.toBe(b.prepareActivitiesOffThread);
    const want = inProcess(read("tcx/sample.tcx"), "tcx");
    expect(await a.prepareActivitiesOffThread(read("tcx/sample.tcx"), "tcx")).toEqual(want);
    expect(await b.prepareActivitiesOffThread(read("tcx/sample.tcx"), "tcx")).toEqual(want);
    expect(await a.prepareActivitiesOffThread(read("tcx/sample.tcx"), "tcx")).toEqual(want);
    expect(a.fileWorkMode()).toBe("worker");
  });
});

describe("prepareUploadOffThread", () => {
  it("reads a gzip-compressed upload as the uncompressed file", async () => {
    const tcx = read("tcx/garmin_connect.tcx");
    expect(await prepareUploadOffThread(gzipSync(tcx), "tcx")).toEqual(inProcess(tcx, "tcx"));
    expect(await prepareUploadOffThread(tcx, "tcx")).toEqual(inProcess(tcx, "tcx"));
  });
  it("refuses damaged gzip with inspectUpload's words, as invalid_file", async () => {
    const damaged = gzipSync(read("gpx/run.gpx")).subarray(0, 2000);
    const inspected = inspectUpload(damaged);
    expect(inspected.ok).toBe(false);
    const got = await rejection(prepareUploadOffThread(damaged, "gpx"));
    expect(got).toBeInstanceOf(FileError);
    expect({ code: (got as FileError).code, message: got.message }).toEqual({ code: "invalid_file", message: inspected.ok ? "" : inspected.detail });
  });
});

describe("inspectUploadInWorker", () => {
  it("answers as inspectUpload does, with the content's SHA-256 for the content: junk after a gzip bomb, damage, a good gzip", async () => {
    const bomb = gzipSync(new TextEncoder().encode(`<?xml version="1.0"?>${" ".repeat(5_000_000)}<gpx></gpx>`));
    const corrupt = Uint8Array.from(gzipSync(read("fit/garmin-edge-500-activity.fit")));
    corrupt[Math.floor(corrupt.length / 2)]! ^= 0xff;
    for (const bytes of [new Uint8Array([...bomb, 0x4a]), corrupt, gzipSync(read("gpx/run.gpx")), read("tcx/sample.tcx")]) {
      const direct = inspectUpload(bytes);
      const expected = direct.ok ? { ok: true, kind: direct.kind, gzip: direct.gzip, contentSha256: createHash("sha256").update(direct.content).digest("hex") } : direct;
      expect(await inspectUploadInWorker(bytes)).toEqual(expected);
    }
  });
});

describe("exportOffThread", () => {
  const activity = syntheticActivity({ hours: 1, seed: 3 });
  it("makes the same FIT, GPX and TCX bytes as in-process", async () => {
    expect(Buffer.from(await exportOffThread("fit", activity)).equals(Buffer.from(exportFit(activity)))).toBe(true);
    expect(new TextDecoder().decode(await exportOffThread("gpx", activity))).toBe(new TextDecoder().decode(exportGpx(activity)));
    expect(new TextDecoder().decode(await exportOffThread("tcx", activity))).toBe(new TextDecoder().decode(exportTcx(activity)));
  });
  it("from stored (encoded) streams, the same as exporting the decoded streams", async () => {
    const streamsData = encodeStreams(activity.streams);
    const { streams: _, ...rest } = activity;
    const got = await exportStoredOffThread("gpx", { ...rest, streamsData });
    expect(new TextDecoder().decode(got)).toBe(new TextDecoder().decode(exportGpx({ ...activity, streams: decodeStreams(streamsData) })));
  });
});

describe("a worker that dies", () => {
  it("a 16 MiB GPX is read within a 64 MB heap (the whole-document reader needed 180 MB): GPX and TCX are read as a stream, never as a whole document", async () => {
    const pool = testPool({ maxHeapMb: 64 });
    const big = exportGpx(syntheticActivity({ hours: 12, seed: 5 }));
    expect(big.byteLength).toBeGreaterThan(15 * 2 ** 20);
    const got = (await pool.run({ op: "prepare", content: big, kind: "gpx" })) as { streamsSize: number }[];
    expect(got.map((a) => a.streamsSize)).toEqual(inProcess(big, "gpx").map((a) => a.streamsSize));
    expect(pool.replaced).toBe(0);
  });

  it("a day's GPX and TCX (34 and 36 MB) are written within a 64 MB heap, from stored streams: the text is written as bytes while it is made (a string per point, joined, needed more than 96 MB)", async () => {
    const pool = testPool({ maxHeapMb: 64 });
    const { streams, ...rest } = syntheticActivity({ hours: 24, seed: 5 });
    const input = { ...rest, streamsData: encodeStreams(streams) };
    for (const format of ["gpx", "tcx"] as const) {
      const got = (await pool.run({ op: "exportStored", format, input })) as Uint8Array;
      expect(got.byteLength).toBeGreaterThan(30 * 2 ** 20);
      const text = new TextDecoder().decode(got.subarray(got.byteLength - 200));
      expect(text).toMatch(format === "gpx" ? /<\/gpx>\n$/ : /<\/TrainingCenterDatabase>\n$/);
    }
    expect(pool.replaced).toBe(0);
  });

  it("out of memory on a file: that file fails as invalid_file, the worker is replaced, the next file is read", async () => {
    const pool = testPool({ maxHeapMb: 16 });
    // A 24-hour GPX at 1 Hz, some 32 MiB: reading it needs more than a 16 MiB heap. (A 32 MiB heap
    // was enough once the codec stopped building a pair per sample to choose the stored samples.)
    const big = exportGpx(syntheticActivity({ hours: 24, seed: 5 }));
    const got = await rejection(pool.run({ op: "prepare", content: big, kind: "gpx" }));
    expect(got).toBeInstanceOf(FileError);
    expect((got as FileError).code).toBe("invalid_file");
    expect(got.message).toMatch(/within the service's limits/);
    expect(pool.replaced).toBe(1);
    const next = (await pool.run({ op: "prepare", content: read("gpx/run.gpx"), kind: "gpx" })) as unknown[];
    expect(next).toEqual(inProcess(read("gpx/run.gpx"), "gpx"));
    expect(pool.mode).toBe("worker");
  });

  it("by exiting: only its task fails; tasks queued behind it run on the replacement", async () => {
    const pool = testPool();
    const crash = rejection(pool.run({ op: "exit" }));
    const after = pool.run({ op: "prepare", content: read("tcx/sample.tcx"), kind: "tcx" });
    const err = await crash;
    expect(err).toBeInstanceOf(FileWorkerError);
    expect(await after).toEqual(inProcess(read("tcx/sample.tcx"), "tcx"));
    expect(pool.replaced).toBe(1);
  });

  it("stopped from outside on a file: the task is to be tried again (FileWorkerError), not the file refused as too large", async () => {
    const pool = testPool();
    await pool.run({ op: "prepare", content: read("gpx/run.gpx"), kind: "gpx" });
    const [pid] = pool.pids;
    const big = exportGpx(syntheticActivity({ hours: 4, seed: 3 }));
    const task = rejection(pool.run({ op: "prepare", content: big, kind: "gpx" }));
    // A SIGKILL the pool did not send (a service manager's final stop, a person's kill -9).
    process.kill(pid!, "SIGKILL");
    const err = await task;
    expect(err).toBeInstanceOf(FileWorkerError);
    expect(err).not.toBeInstanceOf(FileError);
    // Not the request's fault either: a request (an export) meeting it is answered 503 with
    // Retry-After, not a 500 asking to report a fault (an upload still counts it: process-upload.ts).
    expect(err).toBeInstanceOf(FileWorkerStoppedError);
    const answer = errorToResponse(err, new Request("http://localhost/v1/activities/act_x/export?format=gpx"), "trace");
    expect(answer.status).toBe(503);
    expect(answer.headers.get("Retry-After")).toBe("5");
    expect(((await answer.json()) as { detail: string }).detail).toBe("The service was interrupted while it worked on this file; try again shortly.");
    expect(pool.replaced).toBe(1);
    expect(diedOfItsTask(null, "SIGKILL", false)).toBe(false);
    expect(diedOfItsTask(null, "SIGTERM", false)).toBe(false);
    expect(diedOfItsTask(null, "SIGABRT", false)).toBe(true);
    expect(diedOfItsTask(134, null, false)).toBe(true);
    expect(diedOfItsTask(null, "SIGKILL", true)).toBe(true);
  });

  it("a terminal's Ctrl-C or a service manager's SIGTERM does not end a worker on a file: the file is read", async () => {
    const pool = testPool();
    await pool.run({ op: "prepare", content: read("gpx/run.gpx"), kind: "gpx" });
    const [pid] = pool.pids;
    const task = pool.run({ op: "prepare", content: read("tcx/sample.tcx"), kind: "tcx" });
    process.kill(pid!, "SIGTERM");
    process.kill(pid!, "SIGINT");
    expect(await task).toEqual(inProcess(read("tcx/sample.tcx"), "tcx"));
    expect(pool.pids).toEqual([pid]);
    expect(pool.replaced).toBe(0);
  });

  it("by running too long: it is ended, its task fails, the next one runs", async () => {
    // The time allowed counts from when the task is handed to a worker, so it includes starting a
    // new worker process, which took over 300 ms on a loaded 2-core machine: the replacement's
    // 1 ms task then ran out of time too.
    const pool = testPool({ taskTimeoutMs: 2_000 });
    // A spin left to finish would answer null after 20 s; the pool ends it and the task fails.
    const err = await rejection(pool.run({ op: "spin", ms: 20_000 }));
    expect(err).toBeInstanceOf(FileWorkerError);
    expect(await pool.run({ op: "spin", ms: 1 })).toBeNull();
    expect(pool.replaced).toBe(1);
  });
});

describe("order", () => {
  it("an export waiting goes ahead of uploads waiting to be read (after the task in hand and earlier exports)", async () => {
    const pool = testPool();
    const done: string[] = [];
    const track = (name: string, p: Promise<unknown>) => p.then(() => done.push(name));
    const gpx = read("gpx/blue_hills.gpx");
    const activity = syntheticActivity({ hours: 0.2, seed: 5 });
    await pool.run({ op: "spin", ms: 1 }); // a worker is up
    const busy = track("busy", pool.run({ op: "spin", ms: 300 }));
    await vi.waitFor(() => expect({ waiting: pool.waiting, free: pool.hasFreeWorker }).toEqual({ waiting: 0, free: false }));
    const all = [
      busy,
      track("upload 1", pool.run({ op: "prepare", content: gpx, kind: "gpx" })),
      track("upload 2", pool.run({ op: "prepareUpload", bytes: gpx, kind: "gpx" })),
      track("export 1", pool.run({ op: "export", format: "gpx", input: activity })),
      track("export 2", pool.run({ op: "export", format: "tcx", input: activity })),
      track("upload 3", pool.run({ op: "prepare", content: gpx, kind: "gpx" })),
    ];
    await Promise.all(all);
    expect(done).toEqual(["busy", "export 1", "export 2", "upload 1", "upload 2", "upload 3"]);
  });

  it("an upload waiting lets at most 8 exports go ahead of it: a stream of exports never starves it", async () => {
    const pool = testPool();
    const done: string[] = [];
    const activity = syntheticActivity({ hours: 0.05, seed: 5 });
    await pool.run({ op: "spin", ms: 1 }); // a worker is up
    const busy = pool.run({ op: "spin", ms: 300 });
    await vi.waitFor(() => expect({ waiting: pool.waiting, free: pool.hasFreeWorker }).toEqual({ waiting: 0, free: false }));
    const all = [busy, pool.run({ op: "prepare", content: read("gpx/run.gpx"), kind: "gpx" }).then(() => done.push("upload"))];
    for (let i = 1; i <= 10; i++) all.push(pool.run({ op: "export", format: "gpx", input: activity }).then(() => done.push(`export ${i}`)));
    await Promise.all(all);
    expect(done).toEqual([...Array.from({ length: 8 }, (_, i) => `export ${i + 1}`), "upload", "export 9", "export 10"]);
  });
});

describe("warm-up", () => {
  it("prewarm starts a worker before any task; it warms up without an error between tasks and takes the first task", async () => {
    const pool = testPool({ warmUpSteps: 3 });
    expect(pool.pids).toEqual([]);
    pool.prewarm();
    await vi.waitFor(() => expect(pool.warmed).toBe(1), { timeout: 30_000 });
    const [pid] = pool.pids;
    expect(pid).toBeDefined();
    expect(pool.mode).toBe("worker");
    const sample = read("fit/activity-small-fenix2-run.fit");
    expect(await pool.run({ op: "prepare", content: sample, kind: "fit" })).toEqual(inProcess(sample, "fit"));
    expect(pool.pids).toEqual([pid]);
    // Called again with its worker up, it starts no other.
    pool.prewarm();
    await pool.run({ op: "spin", ms: 1 });
    expect(pool.pids).toEqual([pid]);
  });

  it("a task sent while the worker warms up is answered, and the warm-up still ends", async () => {
    const pool = testPool({ warmUpSteps: 40 });
    pool.prewarm();
    await vi.waitFor(() => expect(pool.mode).toBe("worker"), { timeout: 30_000 });
    const sample = read("tcx/sample.tcx");
    expect(await pool.run({ op: "prepare", content: sample, kind: "tcx" })).toEqual(inProcess(sample, "tcx"));
    expect(pool.warmed).toBe(0);
    await vi.waitFor(() => expect(pool.warmed).toBe(1), { timeout: 30_000 });
  });
});

describe("hasFreeWorker (what an upload's early parse asks first)", () => {
  it("is true only while a worker process is up with no task and none waiting", async () => {
    const pool = testPool();
    // No worker yet.
    expect(pool.hasFreeWorker).toBe(false);
    pool.prewarm();
    await vi.waitFor(() => expect(pool.mode).toBe("worker"), { timeout: 30_000 });
    expect(pool.hasFreeWorker).toBe(true);
    const first = pool.run({ op: "spin", ms: 300 });
    expect(pool.hasFreeWorker).toBe(false);
    const second = pool.run({ op: "spin", ms: 1 });
    await first;
    // The waiting task took the worker the moment it was free.
    expect(pool.hasFreeWorker).toBe(false);
    await second;
    expect(pool.hasFreeWorker).toBe(true);
    await pool.close();
    expect(pool.hasFreeWorker).toBe(false);
  });

  it("is never true for a pool that runs tasks on the calling thread", async () => {
    const pool = testPool({ size: 0 });
    await pool.run({ op: "spin", ms: 1 });
    expect(pool.mode).toBe("in-process");
    expect(pool.hasFreeWorker).toBe(false);
  });
});

describe("limits and fallback", () => {
  it("a worker that read a large file is ended once it answers, and a new process takes the next task (V8 keeps a grown heap)", async () => {
    const pool = testPool({ recycleAfterBytes: 100_000 });
    const small = read("tcx/sample.tcx");
    const large = read("gpx/blue_hills.gpx");
    expect(small.byteLength).toBeLessThan(100_000);
    expect(large.byteLength).toBeGreaterThanOrEqual(100_000);
    await pool.run({ op: "prepare", content: small, kind: "tcx" }, small.byteLength);
    const [first] = pool.pids;
    expect(first).toBeDefined();
    await pool.run({ op: "prepare", content: small, kind: "tcx" }, small.byteLength);
    expect(pool.pids).toEqual([first]);
    expect(pool.recycled).toBe(0);

    expect(await pool.run({ op: "prepare", content: large, kind: "gpx" }, large.byteLength)).toEqual(inProcess(large, "gpx"));
    expect(pool.recycled).toBe(1);
    expect(pool.pids).toEqual([]);
    await vi.waitFor(() => expect(() => process.kill(first!, 0)).toThrow(), { timeout: 5_000 });

    expect(await pool.run({ op: "prepare", content: small, kind: "tcx" }, small.byteLength)).toEqual(inProcess(small, "tcx"));
    expect(pool.pids).toHaveLength(1);
    expect(pool.pids[0]).not.toBe(first);
    expect(pool.replaced).toBe(0);
  });

  it("refuses tasks past the queue's bound with a retriable error", async () => {
    const pool = testPool({ maxQueuedTasks: 2 });
    await pool.run({ op: "spin", ms: 1 }); // the worker is up
    const running = pool.run({ op: "spin", ms: 300 });
    await new Promise((r) => setTimeout(r, 50)); // let the first task leave the queue for the worker
    const queued = [pool.run({ op: "spin", ms: 1 }), pool.run({ op: "spin", ms: 1 })];
    const refused = await rejection(pool.run({ op: "spin", ms: 1 }));
    expect(refused).toBeInstanceOf(FileWorkBusyError);
    expect((refused as FileWorkBusyError).retriable).toBe(true);
    await Promise.all([running, ...queued]);
  });

  it("refuses tasks past the queued bytes' bound", async () => {
    const pool = testPool({ maxQueuedBytes: 100_000 });
    const running = pool.run({ op: "spin", ms: 200 });
    const first = pool.run({ op: "spin", ms: 1 }, 80_000);
    expect(await rejection(pool.run({ op: "spin", ms: 1 }, 80_000))).toBeInstanceOf(FileWorkBusyError);
    await Promise.all([running, first]);
  });

  it("a retired pool finishes the task it holds, then ends its workers", async () => {
    const pool = testPool();
    await pool.run({ op: "spin", ms: 1 });
    const running = pool.run({ op: "spin", ms: 200 });
    pool.retire();
    expect(await running).toBeNull();
    expect(pool.mode).toBe("idle");
    expect(await rejection(pool.run({ op: "spin", ms: 1 }))).toBeInstanceOf(FileWorkerError);
  });

  it("without a worker module, runs in-process and still answers", async () => {
    const pool = testPool({
      workerFile: () => Promise.reject(new Error("no bundle here")),
    });
    expect(await pool.run({ op: "prepare", content: read("gpx/run.gpx"), kind: "gpx" })).toEqual(inProcess(read("gpx/run.gpx"), "gpx"));
    expect(pool.mode).toBe("in-process");
    const err = await rejection(pool.run({ op: "prepare", content: read("gpx/empty_trk.gpx"), kind: "gpx" }));
    expect(err).toBeInstanceOf(FileError);
  });

  /**
   * A worker module that counts its starts and exits before it loads (before READY) on the
   * starts listed, and is the real worker on the others: a start that fails for a passing reason.
   */
  async function flakyStarts(failOn: number[]) {
    const dir = mkdtempSync(path.join(tmpdir(), "file-worker-"));
    const count = path.join(dir, "starts");
    writeFileSync(count, "0");
    const real = (await DEFAULT_POOL_OPTIONS.workerFile()) as string;
    const file = path.join(dir, "flaky.mjs");
    writeFileSync(
      file,
      `import { readFileSync, writeFileSync } from "node:fs";
const n = Number(readFileSync(${JSON.stringify(count)}, "utf8")) + 1;
writeFileSync(${JSON.stringify(count)}, String(n));
if (${JSON.stringify(failOn)}.includes(n)) process.exit(1);
await import(${JSON.stringify(pathToFileURL(real).href)});
`,
    );
    return { file, starts: () => Number(readFileSync(count, "utf8")), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  }

  it("a replacement that fails to start (after workers have run here) is started again: files stay off the request thread", async () => {
    const flaky = await flakyStarts([2]);
    try {
      const pool = testPool({ workerFile: async () => flaky.file });
      expect(await pool.run({ op: "prepare", content: read("tcx/sample.tcx"), kind: "tcx" })).toEqual(inProcess(read("tcx/sample.tcx"), "tcx"));
      expect(pool.mode).toBe("worker");
      // The task kills the worker; its replacement dies while it loads; the next one takes the file.
      expect(await rejection(pool.run({ op: "exit" }))).toBeInstanceOf(FileWorkerError);
      expect(await pool.run({ op: "prepare", content: read("gpx/run.gpx"), kind: "gpx" })).toEqual(inProcess(read("gpx/run.gpx"), "gpx"));
      expect(flaky.starts()).toBe(3);
      expect(pool.mode).toBe("worker");
      expect(pool.pids).toHaveLength(1);
    } finally {
      flaky.cleanup();
    }
  });

  it("after five failed starts in a row, reads files in-process, and still answers", async () => {
    const flaky = await flakyStarts([2, 3, 4, 5, 6]);
    try {
      const pool = testPool({ workerFile: async () => flaky.file });
      await pool.run({ op: "prepare", content: read("tcx/sample.tcx"), kind: "tcx" });
      expect(await rejection(pool.run({ op: "exit" }))).toBeInstanceOf(FileWorkerError);
      expect(await pool.run({ op: "prepare", content: read("gpx/run.gpx"), kind: "gpx" })).toEqual(inProcess(read("gpx/run.gpx"), "gpx"));
      expect(flaky.starts()).toBe(6);
      expect(pool.mode).toBe("in-process");
    } finally {
      flaky.cleanup();
    }
  });

  it("with a worker that cannot start, runs the task in-process", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "file-worker-"));
    const broken = path.join(dir, "broken.mjs");
    writeFileSync(broken, "throw new Error('cannot load');\n");
    try {
      const pool = testPool({ workerFile: async () => broken });
      expect(await pool.run({ op: "prepare", content: read("tcx/sample.tcx"), kind: "tcx" })).toEqual(inProcess(read("tcx/sample.tcx"), "tcx"));
      expect(pool.mode).toBe("in-process");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the request thread", () => {
  it("keeps turning while a 12-hour GPX parses off it", async () => {
    const gpx = exportGpx(syntheticActivity({ hours: 12, seed: 9 }));
    await prepareActivitiesOffThread(read("gpx/run.gpx"), "gpx"); // the worker is up
    // Turns of the event loop while the parse is under way: one chain of setImmediate callbacks,
    // each a turn. A parse on this thread would let none run until it ended.
    let turns = 0;
    let parsing = true;
    const turn = () => {
      if (!parsing) return;
      turns++;
      setImmediate(turn);
    };
    setImmediate(turn);
    const parsed = await prepareActivitiesOffThread(gpx, "gpx").finally(() => (parsing = false));
    expect(parsed).toEqual(inProcess(gpx, "gpx"));
    // Some hundreds of thousands on this machine; a thread held by the parse gives none.
    expect(turns).toBeGreaterThan(50);
  });
});

describe("bundleIsFresh", () => {
  it("is false once a source the bundle was built from changes", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "file-worker-"));
    try {
      const out = path.join(dir, "entry.mjs");
      await bundleFileWorker(root, out);
      expect(bundleIsFresh(root, out)).toBe(true);
      const inputs = JSON.parse(readFileSync(`${out}.inputs.json`, "utf8")) as string[];
      expect(inputs).toContain("lib/files/parse.ts");
      const source = path.join(dir, "source.ts");
      writeFileSync(source, "");
      writeFileSync(`${out}.inputs.json`, JSON.stringify([...inputs, source]));
      const later = new Date(Date.now() + 60_000);
      utimesSync(source, later, later);
      expect(bundleIsFresh(root, out)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("judges a bundle copied into another checkout by that checkout's sources", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "file-worker-"));
    try {
      const out = path.join(dir, "entry.mjs");
      await bundleFileWorker(root, out);
      // Another checkout whose copy of a source is newer than the bundle: stale there, fresh here.
      const other = path.join(dir, "checkout");
      mkdirSync(path.join(other, "lib/files"), { recursive: true });
      const inputs = JSON.parse(readFileSync(`${out}.inputs.json`, "utf8")) as string[];
      for (const p of inputs) {
        const copy = path.join(other, p);
        // An input outside the checkout (a node_modules linked in from elsewhere resolves to a
        // path leading out of it) has no copy here: writing one would empty the real file.
        if (path.relative(other, copy).startsWith("..")) continue;
        mkdirSync(path.dirname(copy), { recursive: true });
        writeFileSync(copy, "");
      }
      const later = new Date(Date.now() + 60_000);
      utimesSync(path.join(other, "lib/files/parse.ts"), later, later);
      expect(bundleIsFresh(root, out)).toBe(true);
      expect(bundleIsFresh(other, out)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a worker that aborts", () => {
  it("at its heap limit while growing one Map, which aborts a whole process from a worker thread: only its task fails", async () => {
    const pool = testPool({ maxHeapMb: 32 });
    const err = await rejection(pool.run({ op: "exhaustMemory" }));
    expect(err).toBeInstanceOf(FileWorkerError);
    expect(pool.replaced).toBe(1);
    // This process lives on, and so does the pool.
    expect(await pool.run({ op: "prepare", content: read("tcx/sample.tcx"), kind: "tcx" })).toEqual(inProcess(read("tcx/sample.tcx"), "tcx"));
    expect(pool.mode).toBe("worker");
  });
});
