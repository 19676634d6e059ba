import { constants, gunzipSync } from "node:zlib";
import type { FileKind } from "./types";
import { decodeXml, xmlRootName } from "./xml";

/** The largest file accepted, as received and after decompression (CONTRACT §11: 413 past it). */
export const MAX_FILE_BYTES = 25 * 1024 * 1024;

export type Inspected =
  | { ok: true; kind: FileKind; gzip: boolean; content: Uint8Array }
  | { ok: false; reason: "unsupported_file_type" | "too_large"; detail: string }
  /** A file of a kind this service reads whose gzip is damaged: the upload takes it and fails with this detail. */
  | { ok: false; reason: "invalid_file"; kind: FileKind; gzip: true; detail: string };

const UNSUPPORTED = "The file is not a FIT, GPX or TCX file (optionally gzip-compressed).";
/** Enough of a damaged gzip to recognise what it holds. */
const HEAD_BYTES = 64 * 1024;

/** The kind a file's content shows, or null: FIT by its header, GPX and TCX by their XML root. */
export function recognise(content: Uint8Array): FileKind | null {
  // ".FIT" at bytes 8–11 marks a FIT file; the header size byte is checked when it is read, so a
  // FIT file with a damaged header is a damaged FIT file, not an unknown kind.
  if (content.length >= 12 && content[8] === 0x2e && content[9] === 0x46 && content[10] === 0x49 && content[11] === 0x54) {
    return "fit";
  }
  const root = xmlRootName(decodeXml(content.subarray(0, HEAD_BYTES)));
  if (root === "gpx") return "gpx";
  if (root === "TrainingCenterDatabase") return "tcx";
  return null;
}

const isGzip = (b: Uint8Array) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

function tooLarge(detail: string): Inspected {
  return { ok: false, reason: "too_large", detail };
}

/**
 * Recognises the kind from the content, never from a file name. gzip is decompressed with a hard
 * bound of MAX_FILE_BYTES of output (zlib stops there, so nothing larger is ever allocated). Never
 * throws.
 */
export function inspectUpload(bytes: Uint8Array): Inspected {
  try {
    if (bytes.length > MAX_FILE_BYTES) return tooLarge("The file is larger than 25 MiB.");
    if (!isGzip(bytes)) {
      const kind = recognise(bytes);
      return kind ? { ok: true, kind, gzip: false, content: bytes } : { ok: false, reason: "unsupported_file_type", detail: UNSUPPORTED };
    }
    let content: Uint8Array;
    try {
      content = gunzipSync(bytes, { maxOutputLength: MAX_FILE_BYTES });
    } catch (e) {
      if (isBufferTooLarge(e)) return tooLarge("The file is larger than 25 MiB once decompressed.");
      return damagedGzip(bytes);
    }
    const kind = recognise(content);
    return kind ? { ok: true, kind, gzip: true, content } : { ok: false, reason: "unsupported_file_type", detail: UNSUPPORTED };
  } catch {
    return { ok: false, reason: "unsupported_file_type", detail: UNSUPPORTED };
  }
}

function isBufferTooLarge(e: unknown) {
  return e instanceof Error && ((e as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError);
}

/**
 * A gzip that did not decompress whole. If what does decompress shows a kind we read, the file
 * is that kind, damaged (`invalid_file`, so the upload records the failure); else it is unknown.
 */
function damagedGzip(bytes: Uint8Array): Inspected {
  const partial = (input: Uint8Array): Uint8Array | null => {
    try {
      return gunzipSync(input, { maxOutputLength: MAX_FILE_BYTES, finishFlush: constants.Z_SYNC_FLUSH });
    } catch (e) {
      if (isBufferTooLarge(e)) throw e;
      return null;
    }
  };
  let whole: Uint8Array | null;
  let head: Uint8Array | null;
  try {
    whole = partial(bytes);
    // Damage in the data stops zlib with nothing to show, so shorter and shorter heads are
    // tried: one that ends before the damage decompresses, and the kind shows in its first bytes.
    head = whole;
    for (let n = HEAD_BYTES; !head && n >= 256; n >>= 2) head = partial(bytes.subarray(0, n));
  } catch {
    return tooLarge("The file is larger than 25 MiB once decompressed.");
  }
  const kind = head && head.length > 0 ? recognise(head) : null;
  if (!kind) return { ok: false, reason: "unsupported_file_type", detail: `The gzip file is damaged and what it holds cannot be recognised. ${UNSUPPORTED}` };
  const what = kind.toUpperCase();
  return {
    ok: false,
    reason: "invalid_file",
    kind,
    gzip: true,
    detail: whole
      ? `The gzip-compressed ${what} file is cut off: it ends before its compressed data does (it may not have finished copying).`
      : `The gzip-compressed ${what} file is damaged: its compressed data is corrupt, so it cannot be read.`,
  };
}
