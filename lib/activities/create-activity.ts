import type { z } from "zod";
import { activitySource } from "../auth/actor";
import type { WriteCtx } from "../http/operation";
import { activities } from "../db/schema";
import { compiledInsert } from "../db/client";
import { appendEvent } from "../events/append-event";
import { newId } from "../ids";
import { assertSelf, requireAthleteActor } from "../athletes/reach";
import { ApiError } from "../http/errors";
import { inOrder, MAX_SPEED_MPS, ORDERED_PAIRS, type CreateActivityInput, type OrderedPair, type UpdateActivityInput } from "./schemas";
import { toActivityWire } from "./to-wire";

type CreateInput = z.output<typeof CreateActivityInput>;
type UpdateInput = z.output<typeof UpdateActivityInput>;
/** A field a person or an app sets, in a create or in a change. */
export type InputField = keyof CreateInput | keyof UpdateInput;
type Row = typeof activities.$inferInsert;
type FieldValue<F extends InputField> = Exclude<(F extends keyof CreateInput ? CreateInput[F] : never) | (F extends keyof UpdateInput ? UpdateInput[F] : never), undefined>;
/** The columns a field's values fit (a measurement's null included). */
type ColumnFor<F extends InputField> = { [C in keyof Row]-?: FieldValue<F> extends Row[C] ? C : never }[keyof Row];

/**
 * The column each settable field is stored in: the one list both a create (the insert below)
 * and a change (updateActivity) write from. A field added to CreateActivityInput or
 * UpdateActivityInput fails the typecheck here until it names its column, and once it does, a
 * create stores it and a change changes it; nothing else in either path lists the fields.
 */
export const INPUT_COLUMNS = {
  name: "name",
  sport_type: "sportType",
  start_local: "startLocal",
  elapsed_time_s: "elapsedTimeS",
  moving_time_s: "movingTimeS",
  distance_m: "distanceM",
  elevation_gain_m: "elevationGainM",
  average_speed_mps: "averageSpeedMps",
  max_speed_mps: "maxSpeedMps",
  average_heart_rate_hz: "averageHeartRateHz",
  max_heart_rate_hz: "maxHeartRateHz",
  average_power_w: "averagePowerW",
  energy_j: "energyJ",
} as const satisfies { [F in InputField]: ColumnFor<F> };
type InputColumn = (typeof INPUT_COLUMNS)[InputField];

/** The fields with their columns, in the list's order. */
export const INPUT_FIELDS = Object.entries(INPUT_COLUMNS) as [InputField, InputColumn][];

/** A field's value as its column takes it: a local start is written with a space, not a `T`. */
export function columnValue(field: InputField, value: unknown): unknown {
  return field === "start_local" && typeof value === "string" ? value.replace("T", " ") : value;
}

/**
 * The insert of an activity recorded by hand, written once: every settable field's column
 * (INPUT_COLUMNS), and who recorded it; the others take their defaults.
 */
const insertActivity = compiledInsert("create_activity", activities, [
  "id",
  "athleteId",
  ...INPUT_FIELDS.map(([, column]) => column),
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

/** Distance over time, as `derivedAverageSpeed` takes it, with no bound: null when either is unknown. */
export function speedOver(distanceM: number | null | undefined, timeS: number | null | undefined): number | null {
  return distanceM == null || timeS == null || timeS <= 0 ? null : distanceM / timeS;
}

/** Whether `value` would be stored as `stored` is: compared as the column writes them (a measure rounds). */
export function sameStored(column: keyof typeof activities.$inferInsert, value: unknown, stored: unknown): boolean {
  if (value === null || value === undefined || stored === null || stored === undefined) return (value ?? null) === (stored ?? null);
  const col = activities[column];
  return col.mapToDriverValue(value) === col.mapToDriverValue(stored);
}

/** A pair of ORDERED_PAIRS as a body leaves it: its two values, and which of them the body sent. */
export type PairValues = { pair: OrderedPair; lower: number | null; upper: number | null; sent: { lower: boolean; upper: boolean } };

/**
 * Refuses the pairs out of order, every one at once (a form shows each on its field): 400
 * invalid_parameter_combination naming the member the body sent (the pair's `field` when it sent
 * both), its detail giving the values where one of them is the activity's own.
 */
export function assertInOrder(pairs: PairValues[]): void {
  const errors = pairs
    .filter(({ lower, upper }) => !inOrder(lower, upper))
    .map(({ pair, lower, upper, sent }) => {
      const words = (side: "lower" | "upper") => `${sent[side] ? "" : "the activity's "}${side === "lower" ? lower : upper} ${pair.unit}`;
      const detail = sent.lower && sent.upper ? pair.rule : `${pair.rule}: ${words("lower")} against ${words("upper")}`;
      const field = !sent.upper ? pair.lower : !sent.lower ? pair.upper : pair.field;
      return { field, code: "invalid_parameter_combination" as const, detail };
    });
  if (!errors.length) return;
  throw new ApiError("invalid_parameter_combination", `The request body is invalid: ${errors.map((e) => `${e.field}: ${e.detail}`).join("; ")}`, { errors });
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
  // Derived only when left out: sent as null, it is not known, as in a change (CONTRACT §4).
  const averageSpeed =
    input.average_speed_mps !== undefined
      ? input.average_speed_mps
      : derivedAverageSpeed(input.distance_m, input.moving_time_s ?? input.elapsed_time_s, input.moving_time_s != null ? "moving_time_s" : "elapsed_time_s");
  // An average equal to distance over time is the one the service would derive: not held to the
  // maximum, whoever sent it (an app sending back an activity as it read it).
  const time = input.moving_time_s ?? input.elapsed_time_s;
  const derived = input.average_speed_mps == null || sameStored("averageSpeedMps", speedOver(input.distance_m, time), input.average_speed_mps);
  assertInOrder(
    ORDERED_PAIRS.filter((pair) => !(pair.lower === "average_speed_mps" && derived)).map((pair) => ({
      pair,
      lower: input[pair.lower] ?? null,
      upper: input[pair.upper] ?? null,
      sent: { lower: true, upper: true },
    })),
  );
  const id = newId("act");
  const values = { id, athleteId: actor.userId, source: activitySource(actor) } as Parameters<typeof insertActivity>[1];
  // Each field as sent, null for a measurement left out; the average speed as derived above.
  for (const [field, column] of INPUT_FIELDS) (values as Record<InputColumn, unknown>)[column] = columnValue(field, (input as Partial<Record<InputField, unknown>>)[field]) ?? null;
  values.averageSpeedMps = averageSpeed;
  // The event names the activity by the id made here, so both statements go out together (one
  // round trip in the transaction, not two); if the activity's insert fails, so does the event's.
  const made = insertActivity(ctx.db, values);
  const [[row]] = await Promise.all([made, appendEvent(ctx.db, { type: "activity.created", athleteId: actor.userId, objectId: id, objectType: "activity" })]);
  return toActivityWire(row!);
}
