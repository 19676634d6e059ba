import { eq, sql } from "drizzle-orm";
import type { Ctx } from "../auth/actor";
import { requireAthleteActor } from "../athletes/reach";
import { activities, activityStreams, athleteProfiles } from "../db/schema";
import { readUploadedFile } from "../uploads/file-chunks";
import { exportStoredOffThread } from "../files/worker/pool";
import type { Lap } from "../files/types";
import { ApiError } from "../http/errors";
import { fileBody, type FileBody } from "../http/file-body";
import type { EXPORT_FORMATS } from "./file-schemas";
import { readLaps } from "./get-laps";
import { EXPORT_CONTENT_TYPES } from "./operations";
import type { SportType } from "./schemas";
import type { z } from "zod";
import { reachedActivity } from "./get-activity";

type Format = (typeof EXPORT_FORMATS)[number];

/**
 * A file name a browser can save anywhere: the activity's name (letters and digits of any
 * script; everything else, separators and dots included, becomes `-`) and its local date. The
 * uploaded file is marked `-original`: a file generated in its own format (a FIT upload's FIT
 * export) ends in the date, so a browser saving both keeps both.
 */
export function exportFileName(name: string, startLocal: string, extension: string, { original = false } = {}): string {
  // 80 characters, not UTF-16 units: a cut through a letter outside the BMP (𝐀, say) would
  // leave half of it, which no header can carry.
  const base =
    [
      ...name
        .normalize("NFC")
        .replace(/[^\p{L}\p{N}]+/gu, "-")
        .replace(/^-+|-+$/g, ""),
    ]
      .slice(0, 80)
      .join("")
      .replace(/-+$/, "") || "activity";
  return `${base}-${startLocal.slice(0, 10)}${original ? "-original" : ""}.${extension}`;
}

/**
 * CONTRACT §11's export of an activity the actor reaches: the uploaded file as received, or one
 * generated from its streams and laps. An activity recorded by hand has no file (404).
 */
export async function exportActivity({ ctx, activityId, format }: { ctx: Ctx; activityId: string; format: Format }): Promise<FileBody> {
  requireAthleteActor(ctx.actor);
  const [found] = await ctx.db
    .select({
      athleteId: activities.athleteId,
      uploadId: activities.uploadId,
      name: activities.name,
      sportType: activities.sportType,
      startLocal: activities.startLocal,
      startLocalEpochS: sql<number>`extract(epoch from ${activities.startLocal})`.mapWith(Number),
      // The stored start is the athlete's wall-clock time; the files need the instant: the one
      // the file recorded (the wall clock less its offset then), else the wall clock read in
      // the athlete's timezone now.
      startEpochS: sql<number>`case when ${activities.utcOffsetS} is not null
        then extract(epoch from ${activities.startLocal}) - ${activities.utcOffsetS}
        else extract(epoch from (${activities.startLocal} at time zone ${athleteProfiles.timezone})) end`.mapWith(Number),
      elapsedTimeS: activities.elapsedTimeS,
      movingTimeS: activities.movingTimeS,
      distanceM: activities.distanceM,
      elevationGainM: activities.elevationGainM,
      averageSpeedMps: activities.averageSpeedMps,
      maxSpeedMps: activities.maxSpeedMps,
      averageHeartRateHz: activities.averageHeartRateHz,
      maxHeartRateHz: activities.maxHeartRateHz,
      averagePowerW: activities.averagePowerW,
      energyJ: activities.energyJ,
    })
    .from(activities)
    .innerJoin(athleteProfiles, eq(athleteProfiles.userId, activities.athleteId))
    .where(eq(activities.id, activityId))
    .limit(1);
  const activity = await reachedActivity(ctx, activityId, found);
  const noFile = new ApiError("not_found", `Activity ${activityId} was recorded by hand: it has no file to export.`);
  if (!activity.uploadId) throw noFile;

  if (format === "original") {
    const file = await readUploadedFile(ctx.db, activity.uploadId);
    if (!file) throw noFile;
    return fileBody({
      bytes: file.bytes,
      contentType: file.gzip ? EXPORT_CONTENT_TYPES.gzip : EXPORT_CONTENT_TYPES[file.dataType],
      fileName: exportFileName(activity.name, activity.startLocal, file.gzip ? `${file.dataType}.gz` : file.dataType, { original: true }),
    });
  }

  const [stored] = await ctx.db
    .select({ data: activityStreams.data, keys: activityStreams.keys, firstSampleOffsetS: activityStreams.firstSampleOffsetS })
    .from(activityStreams)
    .where(eq(activityStreams.activityId, activityId))
    .limit(1);
  if (!stored) throw noFile;
  // A GPX file is a track of positions: without any (a trainer, a treadmill, a pool) it would be
  // an empty track that no tool reads back to anything.
  if (format === "gpx" && !stored.keys.includes("latlng")) {
    throw new ApiError("not_found", `Activity ${activityId} recorded no positions, and a GPX file is a track of them: export it as FIT or TCX.`);
  }
  const laps: Lap[] = (await readLaps(ctx.db, activityId)).map(({ activityId: _id, index: _i, ...lap }) => lap);
  const { name, sportType, startEpochS, startLocalEpochS, athleteId: _a, uploadId: _u, startLocal, ...totals } = activity;
  // Generating a long activity's file takes up to seconds (its GPX or TCX text): on the file worker, not this thread.
  const bytes = await exportStoredOffThread(format, {
    sport: sportType as z.output<typeof SportType>,
    startTime: new Date(startEpochS * 1000),
    // The wall clock at the start less the instant: the offset a FIT file's local_timestamp carries.
    utcOffsetS: Math.round(startLocalEpochS - startEpochS),
    // Where the samples begin after that start (a FIT session that started before its first record).
    firstSampleOffsetS: stored.firstSampleOffsetS,
    name,
    totals,
    streamsData: stored.data,
    laps,
  });
  return fileBody({ bytes, contentType: EXPORT_CONTENT_TYPES[format], fileName: exportFileName(name, startLocal, format) });
}
