import { createHash } from "node:crypto";
import { inspectUpload } from "../detect";
import { exportBytes } from "../export/index";
import { parseActivityFile } from "../parse";
import { decodeStreams, encodeStreams } from "../stream-codec";
import { FileError, STREAM_KEYS, type FileKind, type StreamKey } from "../types";
import type { InspectedSummary, PreparedActivity, Task } from "./protocol";

/** Parses a file and encodes each activity's streams as they are stored. */
export function prepareActivities(content: Uint8Array, kind: FileKind): PreparedActivity[] {
  return parseActivityFile(content, kind).map(({ streams, ...rest }) => ({
    ...rest,
    streamsSize: streams.size,
    streamKeys: STREAM_KEYS.filter((k): k is StreamKey => streams[k] !== undefined),
    streamsData: encodeStreams(streams),
  }));
}

/**
 * The same from an upload's stored bytes: checked and, if gzip, decompressed (inspectUpload)
 * first. A file that is not what it claims, or too large once decompressed, fails as `invalid_file`.
 */
export function prepareUpload(bytes: Uint8Array, kind: FileKind): PreparedActivity[] {
  const inspected = inspectUpload(bytes);
  if (!inspected.ok) throw new FileError("invalid_file", inspected.detail);
  return prepareActivities(inspected.content, kind);
}

/** inspectUpload, with the content's SHA-256 in place of the content (which need not travel back). */
export function inspectSummary(bytes: Uint8Array): InspectedSummary {
  const r = inspectUpload(bytes);
  if (!r.ok) return r;
  return { ok: true, kind: r.kind, gzip: r.gzip, contentSha256: createHash("sha256").update(r.content).digest("hex") };
}

/** Runs one task and returns its result. Shared by the worker process and the in-process fallback. */
export function runTask(task: Task): unknown {
  switch (task.op) {
    case "prepare":
      return prepareActivities(task.content, task.kind);
    case "prepareUpload":
      return prepareUpload(task.bytes, task.kind);
    case "export":
      return exportBytes(task.format, task.input);
    case "inspect":
      return inspectSummary(task.bytes);
    case "exportStored": {
      const { streamsData, ...rest } = task.input;
      return exportBytes(task.format, { ...rest, streams: decodeStreams(streamsData) });
    }
    case "exit":
      process.exit(7);
    case "exhaustMemory": {
      // One growing Map: a shape of allocation that aborts the whole process at the heap limit
      // (in a worker thread, on Node 24, it took the server with it; see ./pool.ts).
      const hoard = new Map<number, { i: number }>();
      for (let i = 0; ; i++) hoard.set(i, { i });
    }
    case "spin": {
      const until = Date.now() + task.ms;
      while (Date.now() < until);
      return null;
    }
  }
}
