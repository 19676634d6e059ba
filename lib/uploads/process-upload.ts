import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { inTransaction } from "../db/transaction";
import { uploads } from "../db/schema";
import { readUploadedFile } from "./read-uploaded-file";
import { FileError } from "../files/types";
import { prepareUploadOffThread } from "../files/worker/pool";
import { errorText, log } from "../log";
import { MAX_UPLOAD_ATTEMPTS, releaseUploadClaim, renewUploadClaim, retryDelayS, UPLOAD_LEASE_S, type ClaimedUpload } from "./claim-uploads";
import { failUpload, saveParsedActivities, type UploadOutcome } from "./save-parsed-activities";

export type ProcessOptions = {
  /** The claim's lease (claim-uploads.ts), renewed while the file is processed. */
  leaseS?: number;
  /**
   * Called once the file is parsed, before its activities are written. Tests use it to stop a
   * processor at exactly that point, as a crash would.
   */
  afterParse?: (uploadId: string) => Promise<void>;
};

/**
 * Processes one claimed upload: reads its file, parses it, and writes its activities (or its
 * failure) in one transaction. A file the parser refuses (FileError) ends failed with the
 * parser's words. Anything else unexpected is logged and the claim shortened (retryDelayS): the
 * upload is claimed again and retried, and after MAX_UPLOAD_ATTEMPTS claims it ends failed. A
 * processor that dies instead leaves its claim to lapse with the lease.
 *
 * Reading the file (gunzip, parse, encode the streams) runs in the file worker process
 * (lib/files/worker), one file at a time, so requests on this thread are served meanwhile.
 * A worker that dies or runs out of memory on a file fails it as `invalid_file`; a full queue
 * is retried like any other unexpected error.
 */
export async function processUpload(db: Db, claimed: ClaimedUpload, opts: ProcessOptions = {}): Promise<UploadOutcome> {
  const leaseS = opts.leaseS ?? UPLOAD_LEASE_S;
  if (claimed.attempts > MAX_UPLOAD_ATTEMPTS) {
    log.error("upload given up after repeated failed attempts", { upload_id: claimed.id, attempts: claimed.attempts - 1 });
    return inTransaction(db, (tx) =>
      failUpload(tx, claimed.id, {
        code: "invalid_file",
        detail: `The file could not be processed (${MAX_UPLOAD_ATTEMPTS} attempts failed). Check that it opens in the app that recorded it, or send it again later.`,
      }),
    );
  }
  const renewal = setInterval(() => {
    renewUploadClaim(db, claimed.id, leaseS).catch((err: unknown) => log.warn("upload claim not renewed", { upload_id: claimed.id, error: String(err) }));
  }, (leaseS * 1000) / 3);
  renewal.unref?.();
  try {
    const started = performance.now();
    const [state] = await db.select({ status: uploads.status }).from(uploads).where(eq(uploads.id, claimed.id));
    if (state?.status !== "processing") return "already_finished";
    // In slices: a 25 MiB file read whole costs some 75 MiB of hex text on the way.
    const file = await readUploadedFile(db, claimed.id);
    // Only the delete of an upload's last activity removes its file, and that upload succeeded.
    if (!file) throw new Error(`upload ${claimed.id} is processing but its file is missing`);
    const row = { kind: file.dataType, bytes: file.bytes };
    const read = performance.now();
    let parsed;
    try {
      parsed = await prepareUploadOffThread(row.bytes, row.kind);
    } catch (err) {
      if (!(err instanceof FileError)) throw err;
      return await inTransaction(db, (tx) => failUpload(tx, claimed.id, { code: err.code, detail: err.message }));
    }
    const prepared = performance.now();
    await opts.afterParse?.(claimed.id);
    const outcome = await inTransaction(db, (tx) => saveParsedActivities(tx, claimed.id, parsed));
    const ms = (a: number, b: number) => Math.round((b - a) * 10) / 10;
    log.debug("upload processed", {
      upload_id: claimed.id,
      outcome,
      read_ms: ms(started, read),
      parse_ms: ms(read, prepared),
      save_ms: ms(prepared, performance.now()),
    });
    return outcome;
  } catch (err) {
    log.error("upload processing failed; it will be retried", {
      upload_id: claimed.id,
      attempt: claimed.attempts,
      error: errorText(err),
    });
    if (claimed.attempts >= MAX_UPLOAD_ATTEMPTS) {
      return inTransaction(db, (tx) =>
        failUpload(tx, claimed.id, {
          code: "invalid_file",
          detail: `The file could not be processed (${MAX_UPLOAD_ATTEMPTS} attempts failed). Check that it opens in the app that recorded it, or send it again later.`,
        }),
      ).catch(() => "failed" as const);
    }
    await releaseUploadClaim(db, claimed.id, retryDelayS(claimed.attempts)).catch(() => {});
    return "failed";
  } finally {
    clearInterval(renewal);
  }
}
