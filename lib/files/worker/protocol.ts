import type { Inspected } from "../detect";
import type { ExportInput } from "../export/types";
import type { FileErrorCode, FileKind, ParsedActivity, StreamKey } from "../types";

/** An activity as the worker sends it back: its streams already in the stored encoding (lib/files/stream-codec.ts). */
export type PreparedActivity = Omit<ParsedActivity, "streams"> & {
  streamsSize: number;
  streamKeys: StreamKey[];
  streamsData: Uint8Array;
};

export type ExportFormat = "fit" | "gpx" | "tcx";

/** inspectUpload's answer as the worker sends it back: the content's SHA-256 in place of the content. */
export type InspectedSummary = Exclude<Inspected, { ok: true }> | { ok: true; kind: FileKind; gzip: boolean; contentSha256: string };

/** What a stored activity's export is made from, with the streams still encoded, so only the worker decodes them. */
export type StoredExportInput = Omit<ExportInput, "streams"> & { streamsData: Uint8Array };

export type Task =
  | { op: "prepare"; content: Uint8Array; kind: FileKind }
  | { op: "prepareUpload"; bytes: Uint8Array; kind: FileKind }
  | { op: "export"; format: ExportFormat; input: ExportInput }
  | { op: "exportStored"; format: ExportFormat; input: StoredExportInput }
  | { op: "inspect"; bytes: Uint8Array }
  // Only the pool's tests send these: they prove that a dying worker fails one task and is replaced.
  | { op: "exit" }
  | { op: "exhaustMemory" }
  | { op: "spin"; ms: number };

export type Request = Task & { id: number };

/** A FileError's code rides along, so the caller gets the same error back; anything else is a plain message. */
export type WireError = { name: string; message: string; code?: FileErrorCode };

export type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: WireError };

/** The worker's first message, once its module has loaded: until then a failure means it cannot start at all. */
export const READY = "ready";

/** Sent once a new worker's warm-up (./warm-up.ts) has ended, with what stopped it if it failed. */
export type Warmed = { warmed: true; error?: string };
