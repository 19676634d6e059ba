import { eq } from "drizzle-orm";
import { requestsFirst } from "../http/requests-first";
import type { Db } from "../db/client";
import { inTransaction } from "../db/transaction";
import { uploads } from "../db/schema";
import { readUploadedFile } from "./file-chunks";
import { FileError } from "../files/types";
import { FileWorkerError, prepareUploadOffThread, type PreparedActivity } from "../files/worker/pool";
import { takeEarlyParse } from "./early-parse";
import { errorText, log } from "../log";
import { isDatabaseUnavailable, isRetriable } from "../http/db-errors";
import { deferUploadClaim, MAX_UPLOAD_ATTEMPTS, MAX_UPLOAD_CLAIMS, releaseUploadClaim, renewUploadClaim, retryDelayS, UPLOAD_LEASE_S, type ClaimedUpload } from "./claim-uploads";
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
 * What the upload's early parse (early-parse.ts) gave: its activities, or the file's error. A
 * full queue is rethrown, so the upload is deferred at once rather than read back only to meet
 * the same queue. Another failure that is not the file's (the pool closing) is logged and the
 * file is read back instead (undefined).
 */
async function earlyOutcome(uploadId: string, early: Promise<PreparedActivity[]>): Promise<PreparedActivity[] | undefined> {
  try {
    return await early;
  } catch (err) {
    if (err instanceof FileError || busy(err)) throw err;
    log.warn("early parse failed; reading the upload's file back", { upload_id: uploadId, error: errorText(err) });
    return undefined;
  }
}

/**
 * The file workers too busy to take the upload now: put back uncounted. A worker stopped from
 * outside on it (FileWorkerStoppedError, retriable for an export's request) is not: the kernel's
 * OOM killer stops a worker the file itself exhausted with the same signal, and uncounted such a
 * file would be tried for ever.
 */
function busy(err: unknown): boolean {
  return isRetriable(err) && !(err instanceof FileWorkerError);
}

/**
 * The upload's file read back from the database (in slices) and parsed in the file worker;
 * undefined when the file is gone because the upload finished meanwhile. Only a finished upload
 * loses its file (the delete of its last activity, or its failure): another processor, which
 * took the upload after this one's lease lapsed, ended it between this one's look at its status
 * and the read. That is no error of this processor's: it has nothing left to do.
 */
export async function parseStoredFile(db: Db, uploadId: string): Promise<PreparedActivity[] | undefined> {
  const file = await readUploadedFile(db, uploadId);
  if (!file) {
    const [row] = await db.select({ status: uploads.status }).from(uploads).where(eq(uploads.id, uploadId));
    if (row?.status !== "processing") return undefined;
    throw new Error(`upload ${uploadId} is processing but its file is missing`);
  }
  return prepareUploadOffThread(file.bytes, file.dataType);
}

/** How long an upload waits after the file workers' queue was full (FileWorkBusyError). */
export const BUSY_DELAY_S = 5;

/**
 * Seconds from now until an upload whose processing ended so is claimed again: after a full
 * queue or the database unreachable (BUSY_DELAY_S), or after an unexpected error (retryDelayS of its failures so far, this
 * one counted); undefined when the outcome ended its processing. The local processor's poll
 * finds it then; the Inngest function sends itself an event for that moment.
 */
export function takenAgainInS(outcome: UploadOutcome, claimed: ClaimedUpload): number | undefined {
  if (outcome === "deferred") return BUSY_DELAY_S;
  if (outcome === "retrying") return retryDelayS(claimed.failures + 1);
  return undefined;
}

/** What a failed upload says once its processing failed MAX_UPLOAD_ATTEMPTS times. */
const GIVEN_UP = `The file could not be processed (${MAX_UPLOAD_ATTEMPTS} attempts failed). Check that it opens in the app that recorded it, or send it again later.`;

/**
 * Processes one claimed upload: reads its file, parses it, and writes its activities (or its
 * failure) in one transaction. A file parsed as it arrived, or whose bytes were kept while the
 * workers were busy (early-parse.ts), is taken from there instead of being read back. A file
 * the parser refuses (FileError) ends failed with the parser's words. Anything else unexpected
 * is logged and the claim shortened (retryDelayS): the upload is claimed again and retried, and
 * after MAX_UPLOAD_ATTEMPTS such failures it ends failed. A processor that dies instead leaves
 * its claim to lapse with the lease, which counts only against MAX_UPLOAD_CLAIMS.
 *
 * Reading the file (gunzip, parse, encode the streams) runs in the file worker process
 * (lib/files/worker), one file at a time, so requests on this thread are served meanwhile.
 * A worker that dies or runs out of memory on a file fails it as `invalid_file`. A full queue
 * (FileWorkBusyError) is no failure: the upload is put back, uncounted, for BUSY_DELAY_S, so
 * other callers' exports and uploads never use up a good file's attempts; nor is the database
 * unreachable (isDatabaseUnavailable), put back the same way.
 */
export async function processUpload(db: Db, claimed: ClaimedUpload, opts: ProcessOptions = {}): Promise<UploadOutcome> {
  const leaseS = opts.leaseS ?? UPLOAD_LEASE_S;
  if (claimed.failures >= MAX_UPLOAD_ATTEMPTS || claimed.attempts > MAX_UPLOAD_CLAIMS) {
    log.error("upload given up after repeated failed attempts", { upload_id: claimed.id, attempts: claimed.attempts - 1, failures: claimed.failures });
    return inTransaction(db, (tx) =>
      failUpload(tx, claimed.id, {
        code: "invalid_file",
        detail:
          claimed.failures >= MAX_UPLOAD_ATTEMPTS
            ? GIVEN_UP
            : `The file could not be processed: ${MAX_UPLOAD_CLAIMS} attempts were cut short. Check that it opens in the app that recorded it, or send it again later.`,
      }),
    );
  }
  const renewal = setInterval(() => {
    renewUploadClaim(db, claimed, leaseS).catch((err: unknown) => log.warn("upload claim not renewed", { upload_id: claimed.id, error: String(err) }));
  }, (leaseS * 1000) / 3);
  renewal.unref?.();
  try {
    const started = performance.now();
    // Taken first, so that it is not left waiting for a processor that never comes.
    const early = takeEarlyParse(claimed.id);
    const [state] = await db
      .select({ id: uploads.id, status: uploads.status, athleteId: uploads.athleteId, contentSha256: uploads.contentSha256 })
      .from(uploads)
      .where(eq(uploads.id, claimed.id));
    if (state?.status !== "processing") return "already_finished";
    let parsed;
    try {
      const fromEarly = early ? await earlyOutcome(claimed.id, early()) : undefined;
      parsed = fromEarly ?? (await parseStoredFile(db, claimed.id));
      if (!parsed) return "already_finished";
    } catch (err) {
      if (!(err instanceof FileError)) throw err;
      return await inTransaction(db, (tx) => failUpload(tx, claimed.id, { code: err.code, detail: err.message }));
    }
    const prepared = performance.now();
    await opts.afterParse?.(claimed.id);
    await requestsFirst();
    const outcome = await inTransaction(db, (tx) => saveParsedActivities(tx, state, parsed));
    const ms = (a: number, b: number) => Math.round((b - a) * 10) / 10;
    log.debug("upload processed", {
      upload_id: claimed.id,
      outcome,
      early_parse: early !== undefined,
      read_and_parse_ms: ms(started, prepared),
      save_ms: ms(prepared, performance.now()),
    });
    return outcome;
  } catch (err) {
    if (busy(err)) {
      log.warn("file workers busy; upload deferred", { upload_id: claimed.id, delay_s: BUSY_DELAY_S });
      await deferUploadClaim(db, claimed, BUSY_DELAY_S).catch(() => {});
      return "deferred";
    }
    // The database away (a restart, a failover) is no fault of the file: put back uncounted, as
    // a full queue is. Counted, a few seconds' outage failed a good file for good as invalid_file,
    // and its external_id then answered that failed upload to every retry. If the put-back cannot
    // be written either, the claim lapses with its lease and is taken again.
    if (isDatabaseUnavailable(err)) {
      log.warn("database unreachable; upload deferred", { upload_id: claimed.id, delay_s: BUSY_DELAY_S, error: errorText(err) });
      await deferUploadClaim(db, claimed, BUSY_DELAY_S).catch(() => {});
      return "deferred";
    }
    log.error("upload processing failed; it will be retried", {
      upload_id: claimed.id,
      attempt: claimed.attempts,
      error: errorText(err),
    });
    if (claimed.failures + 1 >= MAX_UPLOAD_ATTEMPTS) {
      // Only under this claim: not another processor's, taken after this one's lease lapsed.
      const giveUp = { code: "invalid_file", detail: GIVEN_UP } as const;
      return inTransaction(db, (tx) => failUpload(tx, claimed.id, giveUp, { claim: claimed.claim })).catch(() => "failed" as const);
    }
    await releaseUploadClaim(db, claimed, retryDelayS(claimed.failures + 1)).catch(() => {});
    return "retrying";
  } finally {
    clearInterval(renewal);
  }
}
