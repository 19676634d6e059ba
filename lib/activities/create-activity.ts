import type { z } from "zod";
import { activitySource } from "../auth/actor";
import type { WriteCtx } from "../http/operation";
import { activities } from "../db/schema";
import { compiledInsert } from "../db/client";
import { appendEvent } from "../events/append-event";
import { newId } from "../ids";
import { assertSelf, requireAthleteActor } from "../athletes/reach";
import { ApiError } from "../http/errors";
import { MAX_SPEED_MPS, type CreateActivityInput } from "./schemas";
import { toActivityWire } from "./to-wire";

/** The insert of an activity recorded by hand, written once (every column but the defaulted). */
const insertActivity = compiledInsert("create_activity", activities, [
  "id",
  "athleteId",
  "name",
  "sportType",
  "startLocal",
  "elapsedTimeS",
  "movingTimeS",
  "distanceM",
  "elevationGainM",
  "averageSpeedMps",
  "maxSpeedMps",
  "averageHeartRateHz",
  "maxHeartRateHz",
  "averagePowerW",
  "energyJ",
  "source",
]);

/**
 * The average speed a body that names none gets from its distance and its moving (else elapsed)
 * time. It is held to the bound a stated speed has (MAX_SPEED_MPS), else 1,000 km in a second
 * would be kept as a speed no client may send; it is not held to the maximum (ORDERED_PAIRS).
 * `timeField` is the time it was taken over; a refusal names `field`, the member the body sent
 * (`distance_m` unless a change sent only a time).
 */
export function derivedAverageSpeed(
  distanceM: number | null | undefined,
  timeS: number | null | undefined,
  timeField: "moving_time_s" | "elapsed_time_s",
  field: "distance_m" | "moving_time_s" | "elapsed_time_s" = "distance_m",
): number | null {
  if (distanceM == null || timeS == null || timeS <= 0) return null;
  const speed = distanceM / timeS;
  if (speed <= MAX_SPEED_MPS) return speed;
  const detail = `distance_m over ${timeField} is ${+speed.toFixed(3)} m/s (${distanceM} m in ${timeS} s), above the ${MAX_SPEED_MPS} m/s any speed may be`;
  throw new ApiError("invalid_parameter_combination", `The request body is invalid: ${field}: ${detail}`, {
    errors: [{ field, code: "invalid_parameter_combination", detail }],
  });
}

/** Records an activity for the actor and emits `activity.created` in the caller's transaction. */
export async function createActivity({
  ctx,
  athleteId,
  input,
}: {
  ctx: WriteCtx;
  athleteId: string;
  input: z.output<typeof CreateActivityInput>;
}) {
  requireAthleteActor(ctx.actor);
  assertSelf(ctx.actor, athleteId);
  const actor = ctx.actor;
  const averageSpeed =
    input.average_speed_mps ??
    derivedAverageSpeed(input.distance_m, input.moving_time_s ?? input.elapsed_time_s, input.moving_time_s != null ? "moving_time_s" : "elapsed_time_s");
  const id = newId("act");
  // The event names the activity by the id made here, so both statements go out together (one
  // round trip in the transaction, not two); if the activity's insert fails, so does the event's.
  const made = insertActivity(ctx.db, {
    id,
    athleteId: actor.userId,
    name: input.name,
    sportType: input.sport_type,
    startLocal: input.start_local.replace("T", " "),
    elapsedTimeS: input.elapsed_time_s,
    movingTimeS: input.moving_time_s ?? null,
    distanceM: input.distance_m ?? null,
    elevationGainM: input.elevation_gain_m ?? null,
    averageSpeedMps: averageSpeed,
    maxSpeedMps: input.max_speed_mps ?? null,
    averageHeartRateHz: input.average_heart_rate_hz ?? null,
    maxHeartRateHz: input.max_heart_rate_hz ?? null,
    averagePowerW: input.average_power_w ?? null,
    energyJ: input.energy_j ?? null,
    source: activitySource(actor),
  });
  const [[row]] = await Promise.all([made, appendEvent(ctx.db, { type: "activity.created", athleteId: actor.userId, objectId: id, objectType: "activity" })]);
  return toActivityWire(row!);
}
