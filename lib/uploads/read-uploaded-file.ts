import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { uploadFiles, uploads } from "../db/schema";

/**
 * The bytes one statement reads. Both drivers receive a bytea as hex text, so reading a 25 MiB
 * file whole costs some 75 MiB of transient strings per request; in slices the cost is bounded
 * by the slice (the upload stores the file the same way, lib/uploads/create-upload.ts).
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
    const [slice] = await db
      .select({ bytes: sql<Uint8Array>`substring(${uploadFiles.bytes} from ${at + 1} for ${FILE_SLICE_BYTES})`.mapWith(uploadFiles.bytes) })
      .from(uploadFiles)
      .where(eq(uploadFiles.uploadId, uploadId));
    if (!slice || slice.bytes.byteLength !== Math.min(FILE_SLICE_BYTES, file.length - at)) return null;
    bytes.set(slice.bytes, at);
  }
  return { dataType: file.dataType, gzip: file.gzip, bytes };
}
