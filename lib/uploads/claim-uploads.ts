import { and, eq, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import { bareColumn, rowsOf, type Db } from "../db/client";
import { uploads } from "../db/schema";

/**
 * How long a claim holds an upload unless its processor renews it. Processing takes well under
 * a second; a processor that dies (SIGKILL, a lost machine) leaves the upload to be claimed
 * again once this has passed.
 */
export const UPLOAD_LEASE_S = 30;

/**
 * Claims after which an upload that never finished is given up as failed: each claim counts,
 * so a file that crashes its processor every time does not crash every instance forever.
 */
export const MAX_UPLOAD_ATTEMPTS = 3;

export type ClaimedUpload = { id: string; attempts: number };

/** An upload waiting for a processor: processing, and no claim in force. */
const claimable = () => and(eq(uploads.status, "processing"), or(isNull(uploads.claimedUntil), lt(uploads.claimedUntil, sql`now()`)));

/**
 * The waiting uploads `which` selects, in turns between athletes (at most `limit`): every
 * athlete's oldest upload still processing comes before anyone's second, every second before
 * anyone's third, and so on, oldest first within a turn. One athlete sending a season of files
 * at once (a watch's whole history) then delays another athlete's one file by at most one file
 * of theirs, not by the whole season. An upload's turn counts its athlete's older uploads still
 * processing, claimed or not, so the file in hand keeps its place.
 */
function waitingInTurns(which: SQL | undefined, limit: number, lock: boolean): SQL {
  return sql`
    select ${uploads.id} as id from ${uploads}
    join (
      select ${uploads.id} as id, row_number() over (partition by ${uploads.athleteId} order by ${uploads.createdAt}, ${uploads.id}) as turn
      from ${uploads} where ${uploads.status} = 'processing'
    ) turns on turns.id = ${uploads.id}
    where ${which}
    order by turns.turn, ${uploads.createdAt}, ${uploads.id}
    limit ${limit}
    ${lock ? sql`for update of ${uploads} skip locked` : sql``}`;
}

/**
 * Claims up to `limit` uploads waiting for a processor, in turns between athletes
 * (`waitingInTurns`), for `leaseS` seconds, counting the attempt. One statement: SKIP LOCKED
 * keeps two processors off the same rows, and a row another processor claimed meanwhile is
 * re-checked before it is taken. With `uploadId`, that upload or nothing (the Inngest
 * function's unit of work).
 *
 * The rows are picked in a MATERIALIZED CTE: written as `UPDATE … WHERE id IN (SELECT … LIMIT n
 * FOR UPDATE SKIP LOCKED)`, PostgreSQL may run the subquery more than once and update more rows
 * than `limit`; those were claimed (their attempt counted) but never processed, and after three
 * lapsed leases a good file ended failed.
 */
export async function claimUploads(db: Db, opts: { limit: number; leaseS?: number; uploadId?: string }): Promise<ClaimedUpload[]> {
  if (opts.limit <= 0) return [];
  const leaseS = opts.leaseS ?? UPLOAD_LEASE_S;
  const which = opts.uploadId ? and(claimable(), eq(uploads.id, opts.uploadId)) : claimable();
  const result = await db.execute(sql`
    with picked as materialized (${waitingInTurns(which, opts.limit, true)})
    update ${uploads}
    set ${bareColumn(uploads.claimedUntil)} = now() + make_interval(secs => ${leaseS}), ${bareColumn(uploads.attempts)} = ${uploads.attempts} + 1
    from picked
    where ${uploads.id} = picked.id and ${claimable()}
    returning ${uploads.id} as id, ${uploads.attempts} as attempts`);
  return rowsOf<{ id: string; attempts: number }>(result).map((r) => ({ id: r.id, attempts: Number(r.attempts) }));
}

/**
 * After an unexpected failure, the claim is shortened to this many seconds (by attempt), so a
 * transient fault (the database restarting) is retried soon and a file that keeps failing ends
 * failed within seconds rather than after several full leases.
 */
export function retryDelayS(attempts: number): number {
  return Math.min(60, 4 ** Math.max(0, attempts - 1));
}

/** Ends this processor's claim early: the upload is taken again once `delayS` has passed. */
export async function releaseUploadClaim(db: Db, uploadId: string, delayS: number): Promise<void> {
  await db
    .update(uploads)
    .set({ claimedUntil: sql`now() + make_interval(secs => ${delayS})` })
    .where(and(eq(uploads.id, uploadId), eq(uploads.status, "processing")));
}

/** Extends a claim still in force (the upload still processing), while its processor works on it. */
export async function renewUploadClaim(db: Db, uploadId: string, leaseS = UPLOAD_LEASE_S): Promise<void> {
  await db
    .update(uploads)
    .set({ claimedUntil: sql`now() + make_interval(secs => ${leaseS})` })
    .where(and(eq(uploads.id, uploadId), eq(uploads.status, "processing")));
}

/** Uploads waiting for a processor (none holds a claim), in turns between athletes, for the Inngest sweep. */
export async function listProcessingUploads(db: Db, limit: number): Promise<string[]> {
  const result = await db.execute(waitingInTurns(claimable(), limit, false));
  return rowsOf<{ id: string }>(result).map((r) => r.id);
}
