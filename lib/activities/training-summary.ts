import { and, eq, gte, lt, sql } from "drizzle-orm";
import { z } from "zod";
import type { Ctx } from "../auth/actor";
import { requireAthleteActor, resolveReachableAthlete } from "../athletes/reach";
import { activities, athleteProfiles } from "../db/schema";
import { ApiError } from "../http/errors";
import { endNotBeforeStart, LocalDate } from "../http/schemas";
import { addDays, localToday, mondayOf } from "../time/local";
import { SportType } from "./schemas";

export const SummaryQuery = z
  .object({
    start: LocalDate.optional().meta({
      description: "First local date included (the athlete's timezone). Default: the first day of the 11th period before the one that holds the range's last day, so 12 periods are covered.",
    }),
    end: LocalDate.optional().meta({ description: "Local date at which the range ends, excluded. Default: tomorrow in the athlete's timezone, so today is included." }),
    group_by: z.enum(["week", "month"]).default("week").meta({ description: "`week` (weeks start on Monday) or `month`." }),
  })
  // As the lists have it.
  .refine(...endNotBeforeStart);

export const TrainingSummary = z
  .object({
    periods: z.array(
      z.object({
        start: LocalDate.meta({ description: "The period's first local date: a Monday, or the first of a month." }),
        sport_type: SportType,
        count: z.number().int(),
        distance_m: z.number().meta({ description: "Metres, to 0.1 m; activities without a distance add nothing." }),
        moving_time_s: z.number().int().meta({ description: "Seconds moving; where an activity has no moving time, its elapsed time." }),
        elevation_gain_m: z.number().meta({ description: "Metres, to 0.1 m." }),
      }),
    ),
  })
  .meta({ id: "TrainingSummary", description: "Training volume per period and sport, oldest period first. Periods without activities are left out." });
export type TrainingSummaryWire = z.output<typeof TrainingSummary>;

/** The longest range one summary covers: about two years of weeks, so a summary is always one small query. */
const MAX_DAYS = 800;
const DEFAULT_PERIODS = 12;

/** The first day of the period `date` falls in: its Monday, or the first of its month. */
function periodStart(date: string, groupBy: "week" | "month"): string {
  return groupBy === "month" ? `${date.slice(0, 8)}01` : mondayOf(date);
}

/** The default start: the first day of the period holding `lastDay` and of the eleven before it. */
function defaultStart(lastDay: string, groupBy: "week" | "month"): string {
  const current = periodStart(lastDay, groupBy);
  if (groupBy === "week") return addDays(current, -7 * (DEFAULT_PERIODS - 1));
  const d = new Date(`${current}T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() - (DEFAULT_PERIODS - 1));
  return d.toISOString().slice(0, 10);
}

/**
 * An athlete's training volume by week (Monday first) or month and sport, in their own calendar:
 * `start_local` is already wall-clock time in their timezone. Reach as for the activity list
 * (SPEC §5.5). The MCP tool `get_training_summary` and the console's weekly chart both read it.
 */
export async function trainingSummary({
  ctx,
  athleteId,
  query,
}: {
  ctx: Ctx;
  athleteId: string;
  query: z.output<typeof SummaryQuery>;
}): Promise<TrainingSummaryWire> {
  requireAthleteActor(ctx.actor);
  const id = await resolveReachableAthlete(ctx.db, ctx.actor, athleteId);
  // A range open at one end runs to today (included) or back 12 periods, as it does when both
  // are left out: never cut short to a span the caller did not ask for.
  let { start, end } = query;
  if (!end) {
    const [profile] = await ctx.db.select({ timezone: athleteProfiles.timezone }).from(athleteProfiles).where(eq(athleteProfiles.userId, id));
    end = addDays(localToday(profile?.timezone ?? "UTC"), 1);
    // A start after today is an empty range, not an end before it.
    if (start && start > end) end = start;
  }
  start ??= defaultStart(addDays(end, -1), query.group_by);
  if (end < start) throw new ApiError("invalid_parameter_combination", "end must not be before start.");
  if ((Date.parse(end) - Date.parse(start)) / 86_400_000 > MAX_DAYS) {
    throw new ApiError("invalid_parameter_combination", `A summary covers at most ${MAX_DAYS} days; narrow start and end.`);
  }
  // date_trunc('week') starts weeks on Monday (ISO 8601), as the contract does.
  // The unit is written into the statement (one of two literals, never the caller's text), so the
  // grouped and selected expressions are the same text and one plan serves each unit.
  const unit = query.group_by === "month" ? "month" : "week";
  const period = sql<string>`to_char(date_trunc(${sql.raw(`'${unit}'`)}, ${activities.startLocal}), 'YYYY-MM-DD')`;
  const rows = await ctx.db
    .select({
      start: period,
      sportType: activities.sportType,
      count: sql<number>`count(*)::int`,
      distance: sql<number>`coalesce(sum(${activities.distanceM}), 0)::float8`,
      moving: sql<number>`coalesce(sum(coalesce(${activities.movingTimeS}, ${activities.elapsedTimeS})), 0)::int8`,
      elevation: sql<number>`coalesce(sum(${activities.elevationGainM}), 0)::float8`,
    })
    .from(activities)
    .where(and(eq(activities.athleteId, id), gte(activities.startLocal, `${start} 00:00:00`), lt(activities.startLocal, `${end} 00:00:00`)))
    .groupBy(period, activities.sportType)
    .orderBy(period, activities.sportType);
  return {
    periods: rows.map((r) => ({
      start: r.start,
      sport_type: r.sportType as z.output<typeof SportType>,
      count: Number(r.count),
      distance_m: Math.round(Number(r.distance) * 10) / 10,
      moving_time_s: Number(r.moving),
      elevation_gain_m: Math.round(Number(r.elevation) * 10) / 10,
    })),
  };
}
