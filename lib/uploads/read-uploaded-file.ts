import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { uploadFiles, uploads } from "../db/schema";

/**
 * The bytes one statement reads. They come as text: base64, which PostgreSQL encodes, as the
 * streams are read (lib/activities/get-streams.ts) and every bytea is written
 * (lib/db/schema/files.ts); both drivers' own hex is twice the size and costs more to receive
 * and decode. Reading a 25 MiB file whole would still cost some 60 MiB of transient strings; in
 * slices the cost is bounded by the slice (the upload stores the file the same way,
 * lib/uploads/create-upload.ts).
 */
const FILE_SLICE_BYTES = 4 * 1024 * 1024;

/** An upload's file as received, with its kind, or null if it is gone (its last activity deleted meanwhile). */
export async function readUploadedFile(db: Db, uploadId: string) {
  const [file] = await db
    .select({ dataType: uploads.dataType, gzip: uploads.gzip, length: sql<number>`octet_length(${uploadFiles.bytes})`.mapWith(Number) })
    .from(uploads)
    .innerJoin(uploadFiles, eq(uploadFiles.uploadId, uploads.id))
    .where(eq(uploads.id, uploadId))
    .limit(1);
  if (!file) return null;
  const bytes = new Uint8Array(file.length);
  for (let at = 0; at < file.length; at += FILE_SLICE_BYTES) {
    // substring() counts from 1.
    const [row] = await db
      .select({ base64: sql<string>`encode(substring(${uploadFiles.bytes} from ${at + 1} for ${FILE_SLICE_BYTES}), 'base64')` })
      .from(uploadFiles)
      .where(eq(uploadFiles.uploadId, uploadId));
    // PostgreSQL breaks base64 into lines; Buffer.from skips the line breaks.
    const slice = row ? Buffer.from(row.base64, "base64") : null;
    if (!slice || slice.byteLength !== Math.min(FILE_SLICE_BYTES, file.length - at)) return null;
    bytes.set(slice, at);
  }
  return { dataType: file.dataType, gzip: file.gzip, bytes };
}
