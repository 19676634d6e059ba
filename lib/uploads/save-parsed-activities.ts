import { and, asc, eq, ne, sql } from "drizzle-orm";
import { activities, activityLaps, activityStreams, athleteProfiles, uploads } from "../db/schema";
import type { Tx } from "../db/transaction";
import { appendEvent } from "../events/append-event";
import type { PreparedActivity } from "../files/worker/pool";
import { newId } from "../ids";
import { localDateTimeIn } from "../time/local";
import { SportType } from "../activities/schemas";
import { deleteUploadFile } from "./file-chunks";
import { defaultActivityName } from "./name-activity";

type UploadRow = typeof uploads.$inferSelect;
/**
 * How processing a claimed upload ended. "deferred": not started (the file workers were too
 * busy), claimed again later, uncounted; "retrying": an unexpected error, counted, claimed again
 * after a short wait (process-upload.ts's takenAgainInS says when for both).
 */
export type UploadOutcome = "succeeded" | "failed" | "already_finished" | "deferred" | "retrying";

/** Laps in one insert: 12 parameters each, well under the 65,534 a statement holds. */
const LAPS_PER_INSERT = 2_000;

/** A number the file gave, or null where it gave none (or nothing finite). */
const finite = (v: number | null | undefined): number | null => (v != null && Number.isFinite(v) ? v : null);
const wholeSeconds = (v: number | null | undefined): number | null => {
  const f = finite(v);
  return f === null ? null : Math.max(0, Math.round(f));
};

/** An upload's columns that never change once it is made: what its save is started from. */
export type UploadKeys = Pick<UploadRow, "id" | "athleteId" | "contentSha256">;

/** The statement that locks the upload's row for this transaction, started at once. */
const lockRow = (tx: Tx, uploadId: string) => tx.select().from(uploads).where(eq(uploads.id, uploadId)).for("update").execute();

/** The row, if it is still processing: a locked row that has ended is not made again. */
const stillProcessing = (rows: UploadRow[]): UploadRow | undefined => (rows[0]?.status === "processing" ? rows[0] : undefined);

/**
 * The upload, locked for this transaction, if it is still processing. A second processor that
 * took it after this one's lease lapsed waits here for this one to commit, then finds it
 * finished: each upload's activities are made exactly once.
 */
async function lockProcessing(tx: Tx, uploadId: string): Promise<UploadRow | undefined> {
  return stillProcessing(await lockRow(tx, uploadId));
}

/**
 * Ends an upload as failed with `{code, detail}`, unless it already ended, or, with `claim`,
 * another processor has claimed it since (claim-uploads.ts `stillClaimed`): a processor whose
 * lease lapsed does not end the other's work with its own failure.
 */
export async function failUpload(
  tx: Tx,
  uploadId: string,
  error: { code: "invalid_file" | "no_activity_data" | "duplicate_activity"; detail: string; duplicateOf?: string },
  { claim }: { claim?: string } = {},
): Promise<UploadOutcome> {
  const row = await lockProcessing(tx, uploadId);
  if (!row || (claim !== undefined && row.claimId !== claim)) return "already_finished";
  await tx
    .update(uploads)
    .set({
      status: "failed",
      errorCode: error.code,
      errorDetail: error.detail,
      duplicateOf: error.duplicateOf ?? null,
      activityIds: [],
      claimedUntil: null,
      updatedAt: sql`now()`,
    })
    .where(eq(uploads.id, uploadId));
  // It made no activity, so nothing will read its file again: kept, a client re-sending a
  // refused file (or sending copies of one at once: all but one are duplicates) grew storage for good.
  await deleteUploadFile(tx, uploadId);
  return "failed";
}

/**
 * Takes the lock on the upload's file for this transaction, started at once: every save of one
 * athlete's uploads of the same bytes takes it before its duplicate check, so two of them
 * processed at once cannot each miss the other.
 */
export const lockFile = (tx: Tx, upload: UploadKeys) =>
  tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`upload:${upload.athleteId}:${upload.contentSha256}`}, 0))`).execute();

/**
 * The activities of earlier uploads of the same file bytes (decompressed) by the same athlete
 * that still exist (CONTRACT §11 `duplicate_activity`), the earliest upload's first, each
 * upload's in the order it made them (a multisport file's legs share one `created_at`, so the
 * upload's own list decides); deleting every activity made from a file lets it be uploaded
 * again. Started at once, like lockRow.
 */
function activitiesOfSameFile(tx: Tx, upload: UploadKeys): Promise<{ id: string }[]> {
  return tx
    .select({ id: activities.id })
    .from(activities)
    .innerJoin(uploads, eq(uploads.id, activities.uploadId))
    .where(
      and(
        eq(activities.athleteId, upload.athleteId),
        eq(uploads.athleteId, upload.athleteId),
        eq(uploads.contentSha256, upload.contentSha256),
        ne(uploads.id, upload.id),
      ),
    )
    .orderBy(asc(uploads.createdAt), sql`array_position(${uploads.activityIds}, ${activities.id})`, asc(activities.id))
    .limit(MAX_NAMED_DUPLICATES + 1)
    .execute();
}

/** The most activities a duplicate's message names; past that it says how many more. */
const MAX_NAMED_DUPLICATES = 10;

/** Why a file is a duplicate, naming what is left of it (`left`: at least one, in order). */
export function duplicateDetail(left: string[]): string {
  if (left.length === 1) return `This file was already uploaded: it is activity ${left[0]}. Delete that activity to upload the file again.`;
  const named = left.slice(0, MAX_NAMED_DUPLICATES);
  const more = left.length > MAX_NAMED_DUPLICATES ? ` and more` : "";
  return `This file was already uploaded: its activities ${named.join(", ")}${more} are still here. Delete every one of them to upload the file again.`;
}

/**
 * Turns a parsed file into its activities, in the caller's one transaction: the duplicate
 * check, then per parsed activity its row (source `upload`), its streams, its laps and
 * `activity.created`, and the upload marked succeeded with their ids. Whatever fails rolls all
 * of it back: never a half-made activity.
 */
export async function saveParsedActivities(tx: Tx, keys: UploadKeys, parsed: PreparedActivity[]): Promise<UploadOutcome> {
  // Four statements sent together, one round trip instead of four: the row lock, the lock on
  // the file, the duplicate check and the athlete's time zone. Each is started here with
  // `execute()`, in this order, so postgres.js sends them in this order as one pipeline (PGlite
  // queues them the same way), and PostgreSQL runs each only once the one before it has
  // finished. That order is what makes the duplicate check sound: under READ COMMITTED a
  // statement sees what was committed when it starts, and the check starts once the file's
  // lock is held, after any other upload of the file has committed. In one statement with the
  // lock, its snapshot would be taken before the wait and miss that commit (the test "an upload
  // whose twin commits while it waits for the file's lock…" in uploads.test.ts).
  const [rows, , same, profiles] = await Promise.all([
    lockRow(tx, keys.id),
    lockFile(tx, keys),
    activitiesOfSameFile(tx, keys),
    tx.select({ timezone: athleteProfiles.timezone }).from(athleteProfiles).where(eq(athleteProfiles.userId, keys.athleteId)).execute(),
  ]);
  const upload = stillProcessing(rows);
  if (!upload) return "already_finished";
  const existing = same[0]?.id;
  if (existing) {
    return failUpload(tx, upload.id, { code: "duplicate_activity", detail: duplicateDetail(same.map((a) => a.id)), duplicateOf: existing });
  }
  if (!parsed.length) return failUpload(tx, upload.id, { code: "no_activity_data", detail: "The file holds no activity." });
  // The parser gives every activity a real start instant; should one ever lack it, the file is
  // what is wrong, and writing it would throw on every attempt (localDateTimeIn's RangeError)
  // until the upload failed as one that could not be processed at all.
  if (parsed.some((p) => !Number.isFinite(p.startTime.getTime()))) {
    return failUpload(tx, upload.id, { code: "invalid_file", detail: "The file gives its activity no valid start time, so the activity cannot be placed in time." });
  }

  const timezone = profiles[0]?.timezone ?? "UTC";
  const sportOverride = upload.sportTypeOverride ? SportType.parse(upload.sportTypeOverride) : undefined;
  const ids: string[] = [];
  // The writes go out together: each is started here, in this order (`execute()`; appendEvent
  // starts its insert at once), postgres.js sends what is issued at once on the transaction's
  // connection as one pipeline (PGlite queues it in the same order), and PostgreSQL runs the
  // statements in the order sent, so each activity's row precedes its streams and laps. About
  // one round trip instead of six per activity; a failed statement fails the transaction, and
  // all of it rolls back as before.
  const writes: Promise<unknown>[] = [];
  for (const p of parsed) {
    const id = newId("act");
    const sport = sportOverride ?? p.sport;
    const startLocal = localDateTimeIn(timezone, p.startTime);
    const localMs = Date.parse(`${startLocal}Z`);
    // Whole minutes, as every timezone's offset is: `start_local` drops the instant's fraction of a second.
    const utcOffsetS = Math.round((localMs - p.startTime.getTime()) / 60_000) * 60;
    // The first sample counted from the start as stored (`start_local` less `utc_offset_s`, whole
    // seconds, as exports read it back), so that start plus this is the sample's instant exactly.
    const storedStartMs = localMs - utcOffsetS * 1000;
    const firstSampleOffsetS = finite(Math.round(p.firstSampleOffsetS * 1000 + p.startTime.getTime() - storedStartMs) / 1000) ?? 0;
    const t = p.totals;
    writes.push(
      tx
        .insert(activities)
        .values({
          id,
          athleteId: upload.athleteId,
          name: upload.nameOverride ?? p.name ?? defaultActivityName(sport, startLocal),
          sportType: sport,
          startLocal: startLocal.replace("T", " "),
          elapsedTimeS: wholeSeconds(t.elapsedTimeS) ?? 0,
          movingTimeS: wholeSeconds(t.movingTimeS),
          distanceM: finite(t.distanceM),
          elevationGainM: finite(t.elevationGainM),
          averageSpeedMps: finite(t.averageSpeedMps),
          maxSpeedMps: finite(t.maxSpeedMps),
          averageHeartRateHz: finite(t.averageHeartRateHz),
          maxHeartRateHz: finite(t.maxHeartRateHz),
          averagePowerW: finite(t.averagePowerW),
          energyJ: finite(t.energyJ),
          source: "upload",
          uploadId: upload.id,
          utcOffsetS,
        })
        .execute(),
    );
    writes.push(
      tx.insert(activityStreams).values({ activityId: id, size: p.streamsSize, keys: p.streamKeys, data: p.streamsData, firstSampleOffsetS }).execute(),
    );
    if (p.laps.length) {
      const laps = p.laps.map((l, index) => ({
        activityId: id,
        index,
        startOffsetS: finite(l.startOffsetS) ?? 0,
        elapsedTimeS: finite(l.elapsedTimeS) ?? 0,
        movingTimeS: finite(l.movingTimeS),
        distanceM: finite(l.distanceM),
        elevationGainM: finite(l.elevationGainM),
        averageSpeedMps: finite(l.averageSpeedMps),
        maxSpeedMps: finite(l.maxSpeedMps),
        averageHeartRateHz: finite(l.averageHeartRateHz),
        maxHeartRateHz: finite(l.maxHeartRateHz),
        averagePowerW: finite(l.averagePowerW),
      }));
      // A statement holds at most 65,534 parameters, 12 a lap: one insert stopped at 5,461 laps.
      for (let i = 0; i < laps.length; i += LAPS_PER_INSERT) writes.push(tx.insert(activityLaps).values(laps.slice(i, i + LAPS_PER_INSERT)).execute());
    }
    writes.push(appendEvent(tx, { type: "activity.created", athleteId: upload.athleteId, objectId: id, objectType: "activity" }));
    ids.push(id);
  }
  writes.push(
    tx
      .update(uploads)
      .set({ status: "succeeded", activityIds: ids, errorCode: null, errorDetail: null, claimedUntil: null, updatedAt: sql`now()` })
      .where(eq(uploads.id, upload.id))
      .execute(),
  );
  await Promise.all(writes);
  return "succeeded";
}
