import { z } from "zod";
import { dateRangeListQuery, Instant, LocalDateTime, listOf } from "../http/schemas";
import { HIDDEN_IN_NAME_MESSAGE, hasHiddenCharacters } from "../text";

export const SPORT_TYPES = [
  "run", "trail_run", "ride", "virtual_ride", "swim", "walk", "hike", "row", "ski", "strength", "yoga", "other",
] as const;
export const SportType = z.enum(SPORT_TYPES).meta({ id: "SportType" });

const seconds = z.number().int().min(0).max(30 * 86_400);
const nonNegative = (max: number) => z.number().min(0).max(max);
/** Heart rate and cadence are frequencies: 150 bpm is 2.5 Hz. 5 Hz is 300 bpm. */
/**
 * 0.2 Hz (12 bpm, a resting heart rate's lower bound too: lib/metrics/schemas.ts) to 5 Hz
 * (300 bpm). Below it is no heart rate, and a value under 0.00005 Hz was stored as 0.
 */
const heartRate = z.number().min(0.2).max(5);
/** The fastest an activity's average or maximum speed may be, stated or derived (create-activity.ts). */
export const MAX_SPEED_MPS = 100;

export const Activity = z
  .object({
    id: z.string().meta({ example: "act_7hQ2mN4rT1vB8kL3pZaX9c" }),
    athlete_id: z.string(),
    name: z.string(),
    sport_type: SportType,
    start_local: LocalDateTime,
    elapsed_time_s: z.number().int(),
    moving_time_s: z.number().int().nullable(),
    distance_m: z.number().nullable().meta({ description: "Metres, to 0.1 m." }),
    elevation_gain_m: z.number().nullable().meta({ description: "Metres, to 0.1 m." }),
    average_speed_mps: z.number().nullable().meta({ description: "Metres per second, to 0.001 m/s." }),
    max_speed_mps: z.number().nullable().meta({ description: "Metres per second, to 0.001 m/s." }),
    average_heart_rate_hz: z.number().nullable().meta({ description: "Beats per second, to 0.0001 Hz (60 × for beats a minute)." }),
    max_heart_rate_hz: z.number().nullable().meta({ description: "Beats per second, to 0.0001 Hz." }),
    average_power_w: z.number().nullable().meta({ description: "Watts, to 0.1 W." }),
    energy_j: z.number().nullable().meta({ description: "Joules, to 1 J." }),
    source: z.string().meta({ description: "`manual`, `upload`, or the integration or app that recorded it." }),
    created_at: Instant,
    updated_at: Instant,
  })
  .meta({ id: "Activity", description: "An activity, in SI units. Unknown measurements are null, never omitted." });
export type ActivityWire = z.input<typeof Activity>;

/**
 * Pairs of measurements whose first never exceeds its second, in what a person or an app sends:
 * moving time is the part of the elapsed time spent moving (a file's is clamped to it when read,
 * lib/files/sanity.ts), and an average is never above the maximum (a file's own session totals
 * are kept as it states them, CONTRACT §11). `field` is the one a refusal names when a body
 * sends both (else it names the one sent), `unit` what its detail writes after a value. Not
 * known (`null`) fits anything. The verbs judge them (createActivity, updateActivity: a change
 * against the activity's stored value for the one it leaves out), not this schema: an average
 * speed equal to distance over time (the one the service derives, whoever sent it) is not held
 * to the maximum, so correcting a treadmill's distance never fails on a maximum the device
 * measured, and an activity sent back as it was read is never refused (it is held to
 * MAX_SPEED_MPS, as any speed is).
 */
export const ORDERED_PAIRS = [
  { lower: "moving_time_s", upper: "elapsed_time_s", field: "moving_time_s", unit: "s", rule: "moving_time_s must not exceed elapsed_time_s" },
  { lower: "average_speed_mps", upper: "max_speed_mps", field: "max_speed_mps", unit: "m/s", rule: "max_speed_mps must not be below average_speed_mps" },
  { lower: "average_heart_rate_hz", upper: "max_heart_rate_hz", field: "max_heart_rate_hz", unit: "Hz", rule: "max_heart_rate_hz must not be below average_heart_rate_hz" },
] as const;
export type OrderedPair = (typeof ORDERED_PAIRS)[number];

export function inOrder(lower: number | null | undefined, upper: number | null | undefined): boolean {
  return lower == null || upper == null || lower <= upper;
}

const measurements = {
  moving_time_s: seconds
    .nullable()
    .optional()
    .meta({ description: "Seconds spent moving: at most `elapsed_time_s` (in a change that leaves `elapsed_time_s` out, the activity's). `null` when not known." }),
  distance_m: nonNegative(1_000_000).nullable().optional(),
  elevation_gain_m: nonNegative(20_000).nullable().optional(),
  average_speed_mps: nonNegative(MAX_SPEED_MPS)
    .nullable()
    .optional()
    .meta({
      description:
        "Left out, it is `distance_m` over `moving_time_s` (else `elapsed_time_s`), and a change of any of those three that leaves it out derives it again: send it with the change to keep another. Sent as `null`, it is not known.",
    }),
  max_speed_mps: nonNegative(MAX_SPEED_MPS)
    .nullable()
    .optional()
    .meta({
      description:
        "At least `average_speed_mps` when both are given (in a change that leaves one out, the activity's), unless the average is `distance_m` over the time, the one the service derives: a corrected distance never fails on the maximum a device measured.",
    }),
  average_heart_rate_hz: heartRate.nullable().optional(),
  max_heart_rate_hz: heartRate
    .nullable()
    .optional()
    .meta({ description: "At least `average_heart_rate_hz` (in a change that leaves one out, the activity's)." }),
  average_power_w: nonNegative(3000).nullable().optional(),
  energy_j: nonNegative(100_000_000).nullable().optional(),
};

const NAME_DESCRIPTION =
  "Without control, bidi or zero-width characters (an emoji's own are writing). White space around it is removed, and a name of white space alone is refused.";

/**
 * An activity's name as a person or an app gives it: shown to the athlete's coaches and apps, so
 * no bidi override or zero-width character that would make it read as something else (team,
 * app and person names refuse them too; a file's own name is cleaned of them, cleanName).
 */
export const ActivityName = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine((name) => !hasHiddenCharacters(name), HIDDEN_IN_NAME_MESSAGE)
  .meta({ description: NAME_DESCRIPTION });

export const CreateActivityInput = z
  .strictObject({
    name: ActivityName,
    sport_type: SportType,
    start_local: LocalDateTime,
    elapsed_time_s: seconds.min(1),
    ...measurements,
  })
  // Swagger UI's "Try it out" starts from this body (its own sample would break the rules across fields).
  .meta({
    id: "CreateActivity",
    example: {
      name: "Morning run",
      sport_type: "run",
      start_local: "2026-03-01T07:30:00",
      elapsed_time_s: 3120,
      moving_time_s: 3000,
      distance_m: 10000,
      elevation_gain_m: 85,
      average_heart_rate_hz: 2.55,
      max_heart_rate_hz: 2.95,
    },
  });

export const UpdateActivityInput = z
  .strictObject({
    // Its hidden characters are checked by updateActivity, against the stored name: a name
    // recorded before ActivityName, sent back as it was read, is no change and is not refused.
    name: z.string().trim().min(1).max(200).optional().meta({ description: NAME_DESCRIPTION }),
    sport_type: SportType.optional(),
    start_local: LocalDateTime.optional(),
    elapsed_time_s: seconds.min(1).optional(),
    ...measurements,
  })
  .refine((v) => Object.keys(v).length > 0, { message: "must name at least one field to change" })
  .meta({ id: "UpdateActivity", minProperties: 1, example: { name: "Easy run by the river" } });

export const ListActivitiesQuery = dateRangeListQuery("First local date included (the athlete's timezone).", {
  sport_type: SportType.optional(),
});

export const ActivityList = listOf(Activity, "ActivityList");
