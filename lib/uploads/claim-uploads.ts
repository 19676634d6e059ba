import { randomUUID } from "node:crypto";
import { and, eq, gte, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { bareColumn, rowsAs, selectAs, type Db, type RawBigint, type RawColumns } from "../db/client";
import { uploads } from "../db/schema";

/**
 * How long a claim holds an upload unless its processor renews it. Processing takes well under
 * a second; a processor that dies (SIGKILL, a lost machine) leaves the upload to be claimed
 * again once this has passed.
 */
export const UPLOAD_LEASE_S = 30;

/**
 * Unexpected errors (caught by the processor) after which an upload is given up as failed: a
 * file that makes processing fail every time ends failed within seconds.
 */
export const MAX_UPLOAD_ATTEMPTS = 3;

/**
 * Claims after which an upload that never finished is given up as failed, however they ended:
 * a claim whose processor died (the service stopped or was killed) is no fault of the file's and
 * counts only here, so a few restarts in a row leave a good upload to finish; a file that takes
 * its processor down every time still does not crash every instance forever.
 */
export const MAX_UPLOAD_CLAIMS = 10;

/** A claimed upload: its counts with this claim, and the claim's id (`uploads.claim_id`), which every later change of the claim names. */
export type ClaimedUpload = { id: string; attempts: number; failures: number; claim: string };

/** An upload waiting for a processor: processing, and no claim in force. */
const claimable = () => and(eq(uploads.status, "processing"), or(isNull(uploads.claimedUntil), lt(uploads.claimedUntil, sql`now()`)));

/** An upload's id, as `waitingInTurns` and `claimUploads` pick it. */
const idColumn = { id: uploads.id };
/** What a claim answers: the upload, and its counts with this claim. */
const claimedColumns = { id: uploads.id, attempts: uploads.attempts, failures: uploads.failures, claim: uploads.claimId };

/**
 * How much later than it was sent an upload counts as sent for each upload its athlete sent in
 * the hour before it (`waitingInTurns`).
 */
export const TURN_S = 60;

/**
 * The uploads waiting for a processor (`claimable`), in turns between athletes (at most `limit`): an upload
 * counts as sent TURN_S later than it was for each upload its athlete sent in the hour before
 * it (waiting, processed or failed), and uploads are taken in that order. One athlete sending a
 * season of files at once (a watch's whole history) then holds back another athlete's file by
 * one of theirs, plus one for each minute their files have already waited, not by the whole
 * season; an athlete who sent nothing lately goes first. No upload's place is later than its
 * send time plus an hour's worth of turns, so none waits for good behind files sent after it.
 * The uploads counted are read with one window over the hour before the oldest waiting upload
 * (`uploads_athlete_created_idx`).
 */
function waitingInTurns(limit: number, lock: boolean, columns: RawColumns = idColumn): SQL {
  const waiting = sql`select ${uploads.athleteId} from ${uploads} where ${uploads.status} = 'processing'`;
  return sql`
    select ${selectAs(columns)} from ${uploads}
    join (
      select ${uploads.id} as id,
        count(*) over (partition by ${uploads.athleteId} order by ${uploads.createdAt} range between interval '1 hour' preceding and current row) - 1 as before
      from ${uploads}
      where ${uploads.athleteId} in (${waiting})
        and ${uploads.createdAt} >= (select min(${uploads.createdAt}) - interval '1 hour' from ${uploads} where ${uploads.status} = 'processing')
    ) turns on turns.id = ${uploads.id}
    where ${claimable()}
    order by ${uploads.createdAt} + turns.before * make_interval(secs => ${TURN_S}), ${uploads.id}
    limit ${limit}
    ${lock ? sql`for update of ${uploads} skip locked` : sql``}`;
}

/**
 * Claims up to `limit` uploads waiting for a processor, in turns between athletes
 * (`waitingInTurns`), for `leaseS` seconds, counting the attempt. One statement: SKIP LOCKED
 * keeps two processors off the same rows, and a row another processor claimed meanwhile is
 * re-checked before it is taken. With `uploadId`, that upload or nothing, whatever its turn
 * (tests, and taking one upload back by hand).
 *
 * The rows are picked in a MATERIALIZED CTE: written as `UPDATE … WHERE id IN (SELECT … LIMIT n
 * FOR UPDATE SKIP LOCKED)`, PostgreSQL may run the subquery more than once and update more rows
 * than `limit`; those were claimed (their attempt counted) but never processed, and after enough
 * lapsed leases a good file ended failed.
 */
export async function claimUploads(db: Db, opts: { limit: number; leaseS?: number; uploadId?: string }): Promise<ClaimedUpload[]> {
  if (opts.limit <= 0) return [];
  const leaseS = opts.leaseS ?? UPLOAD_LEASE_S;
  const claim = randomUUID();
  const picked = opts.uploadId
    ? sql`select ${selectAs(idColumn)} from ${uploads} where ${and(claimable(), eq(uploads.id, opts.uploadId))} for update skip locked`
    : waitingInTurns(opts.limit, true);
  const result = await db.execute(sql`
    with picked as materialized (${picked})
    update ${uploads}
    set ${bareColumn(uploads.claimedUntil)} = now() + make_interval(secs => ${leaseS}), ${bareColumn(uploads.attempts)} = ${uploads.attempts} + 1,
      ${bareColumn(uploads.claimId)} = ${claim}
    from picked
    where ${uploads.id} = picked.id and ${claimable()}
    returning ${selectAs(claimedColumns)}`);
  return rowsAs(claimedColumns, result).map((r) => ({ id: r.id, attempts: Number(r.attempts), failures: Number(r.failures), claim }));
}

/**
 * After an unexpected failure, the claim is shortened to this many seconds (by attempt), so a
 * transient fault (the database restarting) is retried soon and a file that keeps failing ends
 * failed within seconds rather than after several full leases.
 */
export function retryDelayS(attempts: number): number {
  return Math.min(60, 4 ** Math.max(0, attempts - 1));
}

/**
 * The upload, still processing, under this claim: not one another processor has claimed since
 * (this one's lease lapsed while it worked), whose claim is that processor's to change.
 */
function stillClaimed(claimed: Pick<ClaimedUpload, "id" | "claim">): SQL {
  return and(eq(uploads.id, claimed.id), eq(uploads.status, "processing"), eq(uploads.claimId, claimed.claim))!;
}

/**
 * Ends this processor's claim early after an unexpected error, counting it as a failure: the
 * upload is taken again once `delayS` has passed.
 */
export async function releaseUploadClaim(db: Db, claimed: ClaimedUpload, delayS: number): Promise<void> {
  await db
    .update(uploads)
    .set({ claimedUntil: sql`now() + make_interval(secs => ${delayS})`, failures: sql`${uploads.failures} + 1` })
    .where(stillClaimed(claimed));
}

/**
 * Puts a claim back as if it had not been taken, to be claimed again after `delayS`: the processor
 * could not start on the upload (the file workers' queue was full), which is neither the file's
 * fault nor a processor's death, so it counts as neither a failure nor a claim.
 */
export async function deferUploadClaim(db: Db, claimed: ClaimedUpload, delayS: number): Promise<void> {
  await db
    .update(uploads)
    .set({ claimedUntil: sql`now() + make_interval(secs => ${delayS})`, attempts: sql`greatest(${uploads.attempts} - 1, 0)` })
    .where(stillClaimed(claimed));
}

/** Extends this processor's claim (the upload still processing, nobody else's since), while it works on the upload. */
export async function renewUploadClaim(db: Db, claimed: ClaimedUpload, leaseS = UPLOAD_LEASE_S): Promise<void> {
  await db
    .update(uploads)
    .set({ claimedUntil: sql`now() + make_interval(secs => ${leaseS})` })
    .where(stillClaimed(claimed));
}

/** An upload waiting for a processor; `version` changes whenever its claim does (every claim, renewal, put-back and release sets `claimed_until`). */
export type WaitingUpload = { id: string; version: string };

const waitingColumns = {
  id: uploads.id,
  // Computed: claimed_until in whole milliseconds, 0 for an upload never claimed.
  version: sql<RawBigint>`coalesce(floor(extract(epoch from ${uploads.claimedUntil}) * 1000)::bigint, 0)`,
};

/** Uploads waiting for a processor (none holds a claim), in turns between athletes, for the Inngest sweep. */
export async function listProcessingUploads(db: Db, limit: number): Promise<WaitingUpload[]> {
  const result = await db.execute(waitingInTurns(limit, false, waitingColumns));
  return rowsAs(waitingColumns, result).map((r) => ({ id: r.id, version: String(r.version) }));
}

/**
 * While the named upload is still processing and held (a claim, or a put-back's wait): when the
 * first hold on any upload still processing ends. What a processor that found nothing to claim
 * waits for: an upload held a few milliseconds longer than the event that named it expected
 * (the hold set on the database's clock, the event timed by another) is taken when its hold
 * ends; and when another processor is working on the named upload (its lease 30 s, renewed),
 * an upload put back for a second meanwhile is taken when that second is over, not after the
 * other's lease. Null when the named upload is held by nothing (taken, finished, or free).
 */
export async function uploadHeldUntil(db: Db, uploadId: string): Promise<Date | null> {
  const [row] = await db
    .select({
      until: sql<string | Date>`(select min(${held.claimedUntil}) from ${uploads} ${held}
        where ${held.status} = 'processing' and ${held.claimedUntil} >= now())`,
    })
    .from(uploads)
    .where(and(eq(uploads.id, uploadId), eq(uploads.status, "processing"), gte(uploads.claimedUntil, sql`now()`)));
  return row?.until ? new Date(row.until) : null;
}

const held = alias(uploads, "held");
