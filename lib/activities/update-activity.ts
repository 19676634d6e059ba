import { eq } from "drizzle-orm";
import type { z } from "zod";
import type { WriteCtx } from "../http/operation";
import { activities } from "../db/schema";
import { appendEvent } from "../events/append-event";
import { ApiError } from "../http/errors";
import { requireAthleteActor } from "../athletes/reach";
import { findOwnActivity, activityNotFound } from "./get-activity";
import { ORDERED_PAIRS, type UpdateActivityInput } from "./schemas";
import { HIDDEN_IN_NAME_MESSAGE, hasHiddenCharacters } from "../text";
import { toActivityWire } from "./to-wire";
import { assertInOrder, type PairValues, columnValue, derivedAverageSpeed, INPUT_COLUMNS, INPUT_FIELDS, sameStored, speedOver } from "./create-activity";

/**
 * The pairs of ORDERED_PAIRS a change sends either member of, judged on the values the activity
 * will have (the stored one for a member left out). A pair the change leaves as stored (both
 * members sent back as they were read) is as it was, and is not judged again. An average speed
 * equal to the activity's distance over its time (`averageDerived`: the one the service derives,
 * whoever sent it) is not held to the maximum, as a create does not hold it.
 */
function assertPairsInOrder(input: z.output<typeof UpdateActivityInput>, existing: typeof activities.$inferSelect, averageDerived: boolean): void {
  const judged: PairValues[] = [];
  for (const pair of ORDERED_PAIRS) {
    const sent = { lower: input[pair.lower] !== undefined, upper: input[pair.upper] !== undefined };
    if (!sent.lower && !sent.upper) continue;
    const column = (side: "lower" | "upper") => INPUT_COLUMNS[pair[side]];
    const value = (side: "lower" | "upper") => (sent[side] ? input[pair[side]] : existing[column(side)]) as number | null;
    if (sameStored(column("lower"), value("lower"), existing[column("lower")]) && sameStored(column("upper"), value("upper"), existing[column("upper")])) continue;
    if (pair.lower === "average_speed_mps" && averageDerived) continue;
    judged.push({ pair, lower: value("lower"), upper: value("upper"), sent });
  }
  assertInOrder(judged);
}

/**
 * Changes the actor's own activity and emits `activity.updated` in the caller's transaction; a
 * change that leaves every field as it was writes nothing and emits nothing.
 * A coach reads their athletes' activities but does not edit them.
 */
export async function updateActivity({
  ctx,
  activityId,
  input,
}: {
  ctx: WriteCtx;
  activityId: string;
  input: z.output<typeof UpdateActivityInput>;
}) {
  requireAthleteActor(ctx.actor);
  const actor = ctx.actor;
  // Locked: the times checked and the speed derived below are those of the row this changes.
  const existing = await findOwnActivity(ctx, activityId, { doing: "change", forUpdate: true });
  // Only what differs from the row as stored (a measure compared as it rounds): a change that
  // gives every field the value it has (an app sending the activity back as it read it, say)
  // changes nothing, so it writes nothing, emits no `activity.updated` and keeps `updated_at`.
  const set: Partial<typeof activities.$inferInsert> = {};
  // Every settable field, by the columns a create writes too (INPUT_COLUMNS).
  for (const [field, column] of INPUT_FIELDS) {
    const sent = (input as Partial<Record<typeof field, unknown>>)[field];
    if (sent === undefined) continue;
    const value = columnValue(field, sent);
    if (!sameStored(column, value, existing[column])) (set as Record<string, unknown>)[column] = value;
  }
  // The average speed a create derives from distance and time (createActivity) follows them
  // when they change, unless the change names a speed itself: /v1 and the console's edit agree.
  const { distance_m, moving_time_s, elapsed_time_s } = input;
  if (input.average_speed_mps === undefined && ("distanceM" in set || "movingTimeS" in set || "elapsedTimeS" in set)) {
    const distance = distance_m !== undefined ? distance_m : existing.distanceM;
    const moving = moving_time_s !== undefined ? moving_time_s : existing.movingTimeS;
    const time = moving ?? elapsed_time_s ?? existing.elapsedTimeS;
    const timeField = moving != null ? "moving_time_s" : "elapsed_time_s";
    const blamed = distance_m !== undefined ? "distance_m" : moving_time_s !== undefined ? "moving_time_s" : "elapsed_time_s";
    const speed = derivedAverageSpeed(distance, time, timeField, blamed);
    if (!sameStored("averageSpeedMps", speed, existing.averageSpeedMps)) set.averageSpeedMps = speed;
  }
  // Whether the average the activity will have is the one its distance and time give, whoever
  // set it: one derived above, or one kept from a create or change that derived it.
  const final = <K extends keyof typeof set & keyof typeof existing>(k: K) => (k in set ? set[k] : existing[k]) as (typeof existing)[K];
  const averageDerived = sameStored("averageSpeedMps", speedOver(final("distanceM"), final("movingTimeS") ?? final("elapsedTimeS")), final("averageSpeedMps"));
  assertPairsInOrder(input, existing, averageDerived);
  if (input.name !== undefined && input.name !== existing.name && hasHiddenCharacters(input.name)) {
    throw new ApiError("invalid_request", `The request body is invalid: name: ${HIDDEN_IN_NAME_MESSAGE}`, {
      errors: [{ field: "name", code: "invalid_request", detail: HIDDEN_IN_NAME_MESSAGE }],
    });
  }
  if (Object.keys(set).length === 0) return toActivityWire(existing);
  set.updatedAt = new Date();
  // A file's UTC offset belongs to the start it recorded: a start moved by hand is read in the
  // athlete's timezone, as a hand-recorded one is (the export's instant, export-activity.ts).
  if ("startLocal" in set) set.utcOffsetS = null;
  // The activity was found above, so its change and its event go out together (one round trip).
  const [[row]] = await Promise.all([
    ctx.db.update(activities).set(set).where(eq(activities.id, activityId)).returning(),
    appendEvent(ctx.db, { type: "activity.updated", athleteId: actor.userId, objectId: activityId, objectType: "activity" }),
  ]);
  // Not while the row is locked above (a delete that committed first is a 404 there); a guard,
  // so that a row gone by any path is never answered as changed.
  if (!row) throw activityNotFound(activityId);
  return toActivityWire(row);
}
