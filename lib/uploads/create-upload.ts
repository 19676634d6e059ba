import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { uploads } from "../db/schema";
import type { AthleteActor } from "../auth/actor";
import { assertSelf, requireAthleteActor } from "../athletes/reach";
import { ApiError } from "../http/errors";
import type { WriteCtx } from "../http/operation";
import { newId } from "../ids";
import { inspectUploadOffThread } from "../files/detect";
import { inspectUploadInWorker } from "../files/worker/pool";
import type { InspectedSummary } from "../files/worker/protocol";
import type { FileKind } from "../files/types";
import type { ReceivedFile } from "./multipart";
import { MAX_UPLOAD_BYTES, type CreateUploadFields } from "./schemas";
import { toUploadWire } from "./to-wire";
import { notifyUploadWork } from "./wake";
import { beginEarlyParse } from "./early-parse";
import { storeUploadFile } from "./file-chunks";

/** A received file, recognised and hashed before the write's transaction opens. */
export type PreparedUpload = {
  kind: FileKind;
  gzip: boolean;
  fileName: string | null;
  /** The bytes as received (a gzip upload stays gzip: the original is exported as it came). */
  bytes: Uint8Array;
  receivedSha256: string;
  contentSha256: string;
};

/**
 * Two uploads' inspections at a time in a process: each may hold its 25 MiB decompressed and a
 * copy for the digest, and a gzip bomb's body is only kilobytes, so the body budget does not
 * bound them (16 bombs at once took 531 MB).
 */
const inspecting = limit(2);

function limit(n: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      // A waiter is handed the slot of the one that ends, so no newcomer slips in between.
      if (running >= n) await new Promise<void>((go) => waiting.push(go));
      else running++;
      try {
        return await work();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else running--;
      }
    },
  };
}

/** SHA-256 in hex, computed on libuv's thread pool (WebCrypto's digest), not the request thread. */
async function sha256(bytes: Uint8Array): Promise<string> {
  return Buffer.from(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)).toString("hex");
}

/**
 * Recognises the file from its content (CONTRACT §11: FIT header, XML root; gzip around either)
 * and hashes it as received and as decompressed. Up to 25 MiB of work, so it runs before the
 * transaction opens (`before`), no connection held; the decompression and the hashing run on
 * libuv's thread pool (inspectUploadOffThread), so eight gzip bombs at once no longer hold
 * every other caller's request for seconds.
 */
export async function prepareUpload(file: ReceivedFile | undefined): Promise<PreparedUpload> {
  if (!file) {
    const detail = "An upload needs its file in a `file` part of the multipart body.";
    throw new ApiError("invalid_request", detail, { errors: [{ field: "file", code: "invalid_request", detail }] });
  }
  const [quick, receivedSha256] = await inspecting.run(() => Promise.all([inspectUploadOffThread(file.bytes), sha256(file.bytes)]));
  const inspected: InspectedSummary = quick
    ? quick.ok
      ? { ok: true, kind: quick.kind, gzip: quick.gzip, contentSha256: quick.gzip ? await inspecting.run(() => sha256(quick.content)) : receivedSha256 }
      : quick
    : await inspectUploadInWorker(file.bytes);
  if (!inspected.ok && inspected.reason === "invalid_file") {
    // A FIT, GPX or TCX file whose gzip is cut off or corrupt is a damaged file of a kind this
    // service reads: taken (202), and its processing fails as `invalid_file` with these words
    // (CONTRACT §11), as a damaged file sent without gzip does. Its content cannot be hashed.
    return { kind: inspected.kind, gzip: true, fileName: file.name, bytes: file.bytes, receivedSha256, contentSha256: receivedSha256 };
  }
  if (!inspected.ok) {
    if (inspected.reason === "too_large") {
      throw new ApiError("payload_too_large", `${inspected.detail} Files are limited to ${MAX_UPLOAD_BYTES} bytes (25 MiB), decompressed too.`);
    }
    // The inspection's own words name the kinds this service reads.
    throw new ApiError("unsupported_file_type", inspected.detail);
  }
  return {
    kind: inspected.kind,
    gzip: inspected.gzip,
    fileName: file.name,
    bytes: file.bytes,
    receivedSha256,
    contentSha256: inspected.contentSha256,
  };
}

/** Who an `external_id` belongs to besides the athlete: the app, or the athlete's own PATs and console together. */
export function uploaderOf(actor: AthleteActor): string {
  return actor.kind === "oauth" ? actor.clientId : "athlete";
}

async function findByExternalId(db: Db, athleteId: string, uploader: string, externalId: string) {
  const [row] = await db
    .select()
    .from(uploads)
    .where(and(eq(uploads.athleteId, athleteId), eq(uploads.uploader, uploader), eq(uploads.externalId, externalId)))
    .limit(1);
  return row;
}

function replayOrConflict(row: typeof uploads.$inferSelect, file: PreparedUpload) {
  if (row.receivedSha256 !== file.receivedSha256) {
    throw new ApiError(
      "conflict",
      `external_id ${JSON.stringify(row.externalId)} already names upload ${row.id}, sent with other file bytes. Use a new external_id for a new file.`,
    );
  }
  return toUploadWire(row);
}

/**
 * Records an upload for the actor: the row and the original bytes, nothing else, in the
 * caller's transaction; processing happens elsewhere (process-upload.ts), woken by this
 * transaction's commit, from a parse begun here when a file worker is free (early-parse.ts).
 * The same `external_id` from the same uploader answers the first upload as it stands now, or
 * 409 when the bytes differ (CONTRACT §11).
 */
export async function createUpload({
  ctx,
  athleteId,
  fields,
  file,
}: {
  ctx: WriteCtx;
  athleteId: string;
  fields: CreateUploadFields;
  file: PreparedUpload;
}) {
  requireAthleteActor(ctx.actor);
  assertSelf(ctx.actor, athleteId);
  const actor = ctx.actor;
  const uploader = uploaderOf(actor);
  const externalId = fields.external_id ?? null;
  if (externalId !== null) {
    const existing = await findByExternalId(ctx.db, actor.userId, uploader, externalId);
    if (existing) return replayOrConflict(existing, file);
  }
  const [row] = await ctx.db
    .insert(uploads)
    .values({
      id: newId("upl"),
      athleteId: actor.userId,
      uploader,
      externalId,
      dataType: file.kind,
      fileName: file.fileName,
      nameOverride: fields.name ?? null,
      sportTypeOverride: fields.sport_type ?? null,
      gzip: file.gzip,
      receivedSha256: file.receivedSha256,
      contentSha256: file.contentSha256,
      sizeBytes: file.bytes.byteLength,
    })
    // Two requests with one external_id at once: the second waits for the first to commit and inserts nothing.
    .onConflictDoNothing({ target: [uploads.athleteId, uploads.uploader, uploads.externalId], where: sql`${uploads.externalId} is not null` })
    .returning();
  if (!row) {
    const winner = await findByExternalId(ctx.db, actor.userId, uploader, externalId!);
    if (!winner) throw new Error("upload external_id conflict without a row");
    return replayOrConflict(winner, file);
  }
  // A free file worker starts reading the file while its bytes are stored and the answer sent;
  // the processor takes up that parse (early-parse.ts). What commits is the same either way.
  beginEarlyParse(row.id, file.bytes, file.kind);
  await storeUploadFile(ctx.db, row.id, file.bytes);
  await notifyUploadWork(ctx.db);
  return toUploadWire(row);
}
