import { fileWorkerIsFree, prepareUploadOffThread, type PreparedActivity } from "../files/worker/pool";
import type { FileKind } from "../files/types";

/**
 * Early parses: an upload's file handed to a free file worker the moment its row exists, while
 * the request still stores the bytes and answers, so the processor that claims it finds the
 * parse under way (or done) instead of reading the file back from the database and starting
 * then. When no worker is free (a burst), the bytes themselves are kept for the processor, which
 * hands them to a worker when it claims the upload: the file is still not read back. The
 * database stays the only record: an upload whose early parse or kept bytes are lost (the
 * process ended, the transaction rolled back, another instance claimed it, the parse failed for
 * a reason that is not the file's) is read and parsed as any other (process-upload.ts).
 *
 * Only when it costs nobody a wait and bounded memory: a parse only on a free worker process
 * with nothing queued for it (never on the request thread), files of at most EARLY_MAX_BYTES, at
 * most EARLY_MAX_KEPT parses (their results hold every sample), and kept bytes up to
 * EARLY_MAX_KEPT_BYTES in all. Reading a file back cost the burst a query and some 4/3 of the
 * file as a base64 string per upload, and those strings were among what the server's minor
 * collections promoted (bench/README.md, "Where `/me` waits").
 */

/** Larger files are read back when claimed: a worker recycles after one (pool.ts `recycleAfterBytes`). */
export const EARLY_MAX_BYTES = 8 * 1024 * 1024;
/** Parses kept for a processor at once. */
export const EARLY_MAX_KEPT = 16;
/** Bytes kept for a processor at once, counting each file's whole buffer (a 100 KB run is some 300 of these). */
export const EARLY_MAX_KEPT_BYTES = 32 * 1024 * 1024;
/** Files kept for a processor at once (a bound on the map whatever the files' sizes). */
export const EARLY_MAX_KEPT_FILES = 1024;
/** How long a parse or kept bytes wait for their processor before they are dropped (a claim elsewhere, a rollback). */
export const EARLY_KEPT_MS = 60_000;

/** A parse under way, or a file's bytes (and the share of EARLY_MAX_KEPT_BYTES they hold) waiting for one. */
type Kept = { parsed: Promise<PreparedActivity[]> } | { bytes: Uint8Array; kind: FileKind; held: number };
type Early = Kept & { timer: NodeJS.Timeout };

// On globalThis: Next.js bundles this module into the upload route's chunk and into the
// instrumentation's that runs the processor, and both must see one map.
const KEY = Symbol.for("athlete-activity-service.early-parses");
const holder = globalThis as { [KEY]?: Map<string, Early> };
const kept = (holder[KEY] ??= new Map<string, Early>());

function counts(): { parses: number; bytes: number; files: number } {
  const c = { parses: 0, bytes: 0, files: 0 };
  for (const e of kept.values()) {
    if ("parsed" in e) c.parses++;
    else {
      c.files++;
      c.bytes += e.held;
    }
  }
  return c;
}

function keep(uploadId: string, entry: Kept): void {
  const timer = setTimeout(() => kept.delete(uploadId), EARLY_KEPT_MS);
  timer.unref?.();
  kept.set(uploadId, Object.assign(entry, { timer }));
}

/**
 * Starts parsing an upload's file if a worker is free, or keeps its bytes for the processor if
 * none is (see above); otherwise does nothing. The bytes must not change afterwards (a request's
 * own buffer: nothing writes to it once received).
 */
export function beginEarlyParse(uploadId: string, bytes: Uint8Array, kind: FileKind): boolean {
  if (bytes.byteLength > EARLY_MAX_BYTES || kept.has(uploadId)) return false;
  const now = counts();
  if (fileWorkerIsFree()) {
    if (now.parses >= EARLY_MAX_KEPT) return false;
    const parsed = prepareUploadOffThread(bytes, kind);
    // Whoever takes it handles its outcome; one never taken must not be an unhandled rejection.
    parsed.catch(() => {});
    keep(uploadId, { parsed });
    return true;
  }
  // A view into a larger buffer keeps all of it alive: the whole buffer is what counts.
  const held = bytes.buffer.byteLength;
  if (now.files >= EARLY_MAX_KEPT_FILES || now.bytes + held > EARLY_MAX_KEPT_BYTES) return false;
  keep(uploadId, { bytes, kind, held });
  return true;
}

/**
 * An upload's early parse, once: the processor that claimed it takes it, and calls it for the
 * activities (a parse under way, or one begun then from the kept bytes). Not calling it drops it.
 */
export function takeEarlyParse(uploadId: string): (() => Promise<PreparedActivity[]>) | undefined {
  const e = kept.get(uploadId);
  if (!e) return undefined;
  kept.delete(uploadId);
  clearTimeout(e.timer);
  if ("parsed" in e) return () => e.parsed;
  return () => prepareUploadOffThread(e.bytes, e.kind);
}

/** Bytes held for processors now (tests). */
export function earlyBytesKept(): number {
  return counts().bytes;
}

/** Uploads whose early parse waits for its processor (tests). */
export function earlyParsesKept(): number {
  return kept.size;
}
