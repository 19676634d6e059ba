import { and, count, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { uploadFiles, uploads } from "../db/schema";

/**
 * An upload's original file is stored as rows of at most this many bytes (`upload_files`, one
 * row per chunk), written and read one statement a chunk with a turn of the event loop between.
 *
 * Why pieces. A bytea travels as text (base64, lib/db/schema/files.ts): a 25 MiB file in one
 * statement cost some 70 MiB of transient strings and buffers (ten uploads at once passed a
 * gigabyte). It was one value grown by `bytes || slice` and read back by `substring`: each append
 * rewrote and recompressed the whole value so far, and each slice read decompressed all of it.
 * The embedded database (PGlite) runs on the server's own thread, so a 19 MB file held it
 * 1.6–1.8 s at a stretch while stored and seconds more while read, during which no timer fired
 * (webhook deliveries' timeouts among them) and no request was answered. A chunk is compressed
 * once, read alone, and one statement's work is bounded by its size.
 */
export const UPLOAD_FILE_CHUNK_BYTES = 1024 * 1024;

/** A turn of the event loop: timers and I/O callbacks run before the next chunk's statement. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The original file into `upload_files`, one chunk a statement. */
export async function storeUploadFile(db: Db, uploadId: string, bytes: Uint8Array): Promise<void> {
  // An empty file is refused before this (unsupported_file_type); it would still be one row.
  for (let chunk = 0, at = 0; chunk === 0 || at < bytes.byteLength; chunk++, at += UPLOAD_FILE_CHUNK_BYTES) {
    if (chunk > 0) await nextTurn();
    await db.insert(uploadFiles).values({ uploadId, chunk, bytes: bytes.subarray(at, at + UPLOAD_FILE_CHUNK_BYTES) });
  }
}

/**
 * Lets go of an upload's stored file: its last activity was deleted, or it failed and so made
 * none (nothing can read a failed upload's file back: exports go through an activity, and a
 * client re-sending a refused file would otherwise add its bytes for good at every try).
 */
export async function deleteUploadFile(db: Db, uploadId: string): Promise<void> {
  await db.delete(uploadFiles).where(eq(uploadFiles.uploadId, uploadId));
}

/**
 * An upload's file as received, with its kind, or null if it is gone (its last activity deleted
 * meanwhile, between two chunks' reads).
 */
export async function readUploadedFile(db: Db, uploadId: string) {
  const [file] = await db
    .select({
      dataType: uploads.dataType,
      gzip: uploads.gzip,
      chunks: count(),
      // octet_length reads a stored value's size from its header, without decompressing it.
      length: sql<number>`sum(octet_length(${uploadFiles.bytes}))`.mapWith(Number),
    })
    .from(uploads)
    .innerJoin(uploadFiles, eq(uploadFiles.uploadId, uploads.id))
    .where(eq(uploads.id, uploadId))
    .groupBy(uploads.id);
  if (!file) return null;
  const bytes = new Uint8Array(file.length);
  let at = 0;
  for (let chunk = 0; chunk < file.chunks; chunk++) {
    if (chunk > 0) await nextTurn();
    // As base64 text, which PostgreSQL encodes, as the streams are read
    // (lib/activities/get-streams.ts): both drivers' own hex is twice the size and costs more to
    // receive and decode.
    const [row] = await db
      .select({ base64: sql<string>`encode(${uploadFiles.bytes}, 'base64')` })
      .from(uploadFiles)
      .where(and(eq(uploadFiles.uploadId, uploadId), eq(uploadFiles.chunk, chunk)));
    // PostgreSQL breaks base64 into lines; Buffer.from skips the line breaks.
    const piece = row ? Buffer.from(row.base64, "base64") : null;
    if (!piece || at + piece.byteLength > file.length) return null;
    bytes.set(piece, at);
    at += piece.byteLength;
  }
  return at === file.length ? { dataType: file.dataType, gzip: file.gzip, bytes } : null;
}
