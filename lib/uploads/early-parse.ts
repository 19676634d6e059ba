import { fileWorkerIsFree, prepareUploadOffThread, type PreparedActivity } from "../files/worker/pool";
import type { FileKind } from "../files/types";

/**
 * Early parses: an upload's file handed to a free file worker the moment its row exists, while
 * the request still stores the bytes and answers, so the processor that claims it finds the
 * parse under way (or done) instead of reading the file back from the database and starting
 * then. The database stays the only record: an upload whose early parse is lost (the process
 * ended, the transaction rolled back, another instance claimed it, the parse failed for a reason
 * that is not the file's) is read and parsed as any other (process-upload.ts).
 *
 * Only when it costs nobody a wait: a worker process is free and nothing queues for it (never
 * on the request thread), the file is at most EARLY_MAX_BYTES, and at most EARLY_MAX_KEPT are
 * kept. During a burst the worker is busy, and uploads take the usual path.
 */

/** Larger files are read back when claimed: a worker recycles after one (pool.ts `recycleAfterBytes`). */
export const EARLY_MAX_BYTES = 8 * 1024 * 1024;
/** Parses kept for a processor at once. */
export const EARLY_MAX_KEPT = 16;
/** How long a parse waits for its processor before it is dropped (a claim elsewhere, a rollback). */
export const EARLY_KEPT_MS = 60_000;

type Early = { parsed: Promise<PreparedActivity[]>; timer: NodeJS.Timeout };

// On globalThis: Next.js bundles this module into the upload route's chunk and into the
// instrumentation's that runs the processor, and both must see one map.
const KEY = Symbol.for("athlete-activity-service.early-parses");
const holder = globalThis as { [KEY]?: Map<string, Early> };
const kept = (holder[KEY] ??= new Map<string, Early>());

/** Starts parsing an upload's file if a worker is free (see above); otherwise does nothing. */
export function beginEarlyParse(uploadId: string, bytes: Uint8Array, kind: FileKind): boolean {
  if (bytes.byteLength > EARLY_MAX_BYTES || kept.size >= EARLY_MAX_KEPT || kept.has(uploadId) || !fileWorkerIsFree()) return false;
  const parsed = prepareUploadOffThread(bytes, kind);
  // Whoever takes it handles its outcome; one never taken must not be an unhandled rejection.
  parsed.catch(() => {});
  const timer = setTimeout(() => kept.delete(uploadId), EARLY_KEPT_MS);
  timer.unref?.();
  kept.set(uploadId, { parsed, timer });
  return true;
}

/** The early parse of an upload, once: the processor that claimed it takes it. */
export function takeEarlyParse(uploadId: string): Promise<PreparedActivity[]> | undefined {
  const e = kept.get(uploadId);
  if (!e) return undefined;
  kept.delete(uploadId);
  clearTimeout(e.timer);
  return e.parsed;
}

/** Uploads whose early parse waits for its processor (tests). */
export function earlyParsesKept(): number {
  return kept.size;
}
