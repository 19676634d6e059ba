import type { ExportInput } from "../export/types";
import type { FileErrorCode, FileKind, ParsedActivity, StreamKey } from "../types";

/** An activity as the worker sends it back: its streams already in the stored encoding (lib/files/stream-codec.ts). */
export type PreparedActivity = Omit<ParsedActivity, "streams"> & {
  streamsSize: number;
  streamKeys: StreamKey[];
  streamsData: Uint8Array;
};

export type ExportFormat = "fit" | "gpx" | "tcx";

/** What a stored activity's export is made from, with the streams still encoded, so only the worker decodes them. */
export type StoredExportInput = Omit<ExportInput, "streams"> & { streamsData: Uint8Array };

export type Task =
  | { op: "prepare"; content: Uint8Array; kind: FileKind }
  | { op: "prepareUpload"; bytes: Uint8Array; kind: FileKind }
  | { op: "export"; format: ExportFormat; input: ExportInput }
  | { op: "exportStored"; format: ExportFormat; input: StoredExportInput }
  // Only the pool's tests send these: they prove that a dying worker fails one task and is replaced.
  | { op: "exit" }
  | { op: "exhaustMemory" }
  | { op: "spin"; ms: number };

/**
 * A file larger than this crosses the channel in slices of this size, one at a time
 * (./pool.ts): the channel's serializer copies whatever it sends, so a whole 25 MiB file sent at
 * once cost the server a second 25 MiB buffer while it was written, and the worker a third
 * while it was read.
 */
export const FILE_SLICE_BYTES = 1024 * 1024;

/**
 * A task as sent. With `incoming`, its file (see fileOf) is left out and follows in `Slice`
 * messages, `incoming` bytes in all, in order.
 */
export type Request = Task & { id: number; incoming?: number };

/** The next part of a task's file. */
export type Slice = { id: number; slice: Uint8Array };

/** The file a task reads, if it reads one. */
export function fileOf(task: Task): Uint8Array | undefined {
  if (task.op === "prepare") return task.content;
  if (task.op === "prepareUpload") return task.bytes;
  return undefined;
}

/** The task with its file replaced (a task without a file is returned as it is). */
export function withFile<T extends Task>(task: T, file: Uint8Array): T {
  if (task.op === "prepare") return { ...task, content: file };
  if (task.op === "prepareUpload") return { ...task, bytes: file };
  return task;
}

/** A FileError's code rides along, so the caller gets the same error back; anything else is a plain message. */
export type WireError = { name: string; message: string; code?: FileErrorCode };

export type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: WireError };

/** The worker's first message, once its module has loaded: until then a failure means it cannot start at all. */
export const READY = "ready";

/** Sent once a new worker's warm-up (./warm-up.ts) has ended, with what stopped it if it failed. */
export type Warmed = { warmed: true; error?: string };
