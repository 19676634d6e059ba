import { inspectUpload } from "../detect";
import { exportFit, exportGpx, exportTcx } from "../export/index";
import type { ExportInput } from "../export/types";
import { parseActivityFile } from "../parse";
import { decodeStreams, encodeStreams } from "../stream-codec";
import { FileError, STREAM_KEYS, type FileKind, type StreamKey } from "../types";
import type { ExportFormat, PreparedActivity, Task } from "./protocol";

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

/** A generated file as bytes. TextEncoder, not Buffer.from: a small Buffer sits in Node's shared pool, which cannot be transferred. */
export function exportBytes(format: ExportFormat, input: ExportInput): Uint8Array {
  if (format === "fit") return exportFit(input);
  return new TextEncoder().encode(format === "gpx" ? exportGpx(input) : exportTcx(input));
}

/** Runs one task; the result, and the buffers to transfer with it. Shared by the worker and the in-process fallback. */
export function runTask(task: Task): { result: unknown; transfer: ArrayBuffer[] } {
  switch (task.op) {
    case "prepare": {
      const result = prepareActivities(task.content, task.kind);
      return { result, transfer: ownBuffers(result.map((a) => a.streamsData)) };
    }
    case "prepareUpload": {
      const result = prepareUpload(task.bytes, task.kind);
      return { result, transfer: ownBuffers(result.map((a) => a.streamsData)) };
    }
    case "export": {
      const bytes = exportBytes(task.format, task.input);
      return { result: bytes, transfer: ownBuffers([bytes]) };
    }
    case "exportStored": {
      const { streamsData, ...rest } = task.input;
      const bytes = exportBytes(task.format, { ...rest, streams: decodeStreams(streamsData) });
      return { result: bytes, transfer: ownBuffers([bytes]) };
    }
    case "exit":
      process.exit(7);
    case "exhaustMemory": {
      const hoard: number[][] = [];
      for (;;) hoard.push(Array.from({ length: 1e6 }, (_, i) => i * 1.5));
    }
    case "spin": {
      const until = Date.now() + task.ms;
      while (Date.now() < until);
      return { result: null, transfer: [] };
    }
  }
}

/** The buffers that can be moved rather than copied: only those a view covers entirely (a view into a larger buffer would carry it all). */
function ownBuffers(views: Uint8Array[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const v of views) {
    if (v.buffer instanceof ArrayBuffer && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength) out.add(v.buffer);
  }
  return [...out];
}
