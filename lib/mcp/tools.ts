import { z } from "zod";
import type { Ctx } from "../auth/actor";
import type { Scope } from "../auth/scopes";
import { getActivity } from "../activities/get-activity";
import { readLaps, toLapWire } from "../activities/get-laps";
import { getStreams } from "../activities/get-streams";
import { listActivities } from "../activities/list-activities";
import { getActivityOp, getActivityStreamsOp, listActivitiesOp } from "../activities/operations";
import { Activity, ListActivitiesQuery } from "../activities/schemas";
import { Lap, StreamsQuery } from "../activities/file-schemas";
import { SummaryQuery, trainingSummary, TrainingSummary } from "../activities/training-summary";
import { getAthleteProfile } from "../athletes/get-athlete-profile";
import { getAthleteOp } from "../athletes/operations";
import { AthleteIdParam } from "../http/schemas";
import { listMetrics } from "../metrics/metrics";
import { listMetricsOp } from "../metrics/operations";
import { ListMetricsQuery } from "../metrics/schemas";
import { listCoachedAthletes } from "../teams/coached-athletes";

// The MCP server's tools (CONTRACT §12). Each is a thin adapter over the verb that serves the
// same data on /v1, with that operation's schemas: its input is the operation's path and query
// parameters as one object, its output the operation's response schema, so `/mcp` and `/v1`
// cannot answer the same question differently. The tools only read.

export type McpTool<I extends z.ZodObject = z.ZodObject> = {
  name: string;
  title: string;
  description: string;
  input: I;
  output: z.ZodType;
  /** The scope the tool needs to be listed and called at all. */
  scope: Scope;
  /** Every scope a call with these (already valid) arguments needs: `latlng` also needs `location.read`. */
  scopesFor?: (args: z.output<I>) => Scope[];
  /** The answer's structured content: a value, or JSON text as the verb gives it for SQL-built answers (lib/http/raw-json.ts). */
  run: (ctx: Ctx, args: z.output<I>) => Promise<unknown>;
};

/**
 * A tool whose `run` and `scopesFor` get its input schema's output type; listed as an McpTool.
 * Its input takes no argument it does not name (`additionalProperties: false` in its JSON
 * Schema): a misspelt `athleteId` would otherwise be dropped and the call answer for `me`, a
 * wrong answer the assistant would take for the one it asked.
 */
function tool<I extends z.ZodObject>(t: McpTool<I>): McpTool {
  return { ...t, input: t.input.strict() } as unknown as McpTool;
}

const athleteId = AthleteIdParam.optional().meta({ description: "An athlete id, or `me` (the default) for the athlete who connected the assistant. A coach may name a team member." });

/**
 * An output schema as MCP wants it, an object at its root: the /v1 schemas carry an OpenAPI id,
 * which would make the root a `$ref`. The members keep theirs (as `$defs`).
 */
function rootObject(schema: z.ZodType): z.ZodObject {
  return z.object((schema as z.ZodObject).shape);
}

/** `list_team_athletes`'s answer. */
const TeamAthletes = z.object({
  data: z.array(z.object({ athlete_id: z.string(), name: z.string().nullable(), team_id: z.string(), team_name: z.string() })),
  truncated: z.literal(true).optional().meta({ description: "Present when more teams or members exist than were listed." }),
});

const TOOLS: McpTool[] = [
  tool({
    name: "get_profile",
    title: "Athlete profile",
    description: "The athlete's profile: name, timezone, units preference, subscription and connected devices. Call it first to learn whose training this is and their timezone.",
    input: z.object({ athlete_id: athleteId }),
    output: rootObject(getAthleteOp.response.schema!),
    scope: getAthleteOp.scope!,
    run: (ctx, a) => getAthleteProfile({ ctx, athleteId: a.athlete_id ?? "me" }),
  }),
  tool({
    name: "list_activities",
    title: "List activities",
    description:
      "The athlete's activities, newest first, with their totals in SI units (metres, seconds, metres per second, heart rate in beats per second). `start` and `end` are local dates in the athlete's timezone (`end` excluded). Page with `cursor` = the previous answer's `next_cursor`.",
    input: ListActivitiesQuery.safeExtend({ athlete_id: athleteId }),
    output: rootObject(listActivitiesOp.response.schema!),
    scope: listActivitiesOp.scope!,
    run: async (ctx, a) => {
      const { athlete_id, ...query } = a;
      return listActivities({ ctx, athleteId: athlete_id ?? "me", query });
    },
  }),
  tool({
    name: "get_activity",
    title: "Get an activity",
    description: "One activity by id, with its laps (from the file it was read from; none for an activity recorded by hand).",
    input: z.object({ id: getActivityOp.params!.shape.activity_id.meta({ description: "The activity's id (`act_…`)." }) }),
    output: z.object({ ...Activity.shape, laps: z.array(Lap) }),
    scope: getActivityOp.scope!,
    run: async (ctx, a) => {
      // One reach check for both: the laps of an activity already found reachable.
      const activity = await getActivity({ ctx, activityId: a.id });
      const laps = await readLaps(ctx.db, a.id);
      return { ...Activity.parse(JSON.parse(activity.text)), laps: laps.map(toLapWire) };
    },
  }),
  tool({
    name: "get_activity_streams",
    title: "Get an activity's samples",
    description: `The samples of an activity read from a file, channel by channel, downsampled to \`low\` (≤ 100 samples) or \`medium\` (≤ 1,000) keeping the curve's shape. \`keys\`: comma-separated among time_s, latlng, distance_m, altitude_m, speed_mps, heart_rate_hz, cadence_hz, power_w, temperature_c; \`latlng\` (where the athlete trained) needs the \`location.read\` scope.`,
    input: StreamsQuery.safeExtend({
      id: getActivityStreamsOp.params!.shape.activity_id.meta({ description: "The activity's id (`act_…`)." }),
      resolution: z
        .enum(["low", "medium"])
        .default("low")
        .meta({ description: "`low` (≤ 100 samples, the default) or `medium` (≤ 1,000)." }),
    }),
    output: rootObject(getActivityStreamsOp.response.schema!),
    scope: getActivityStreamsOp.scope!,
    scopesFor: (a) => (a.keys?.includes("latlng") ? ["activities.read", "location.read"] : ["activities.read"]),
    run: async (ctx, a) => {
      const { id, ...query } = a;
      return getStreams({ ctx, activityId: id, query });
    },
  }),
  tool({
    name: "list_metrics",
    title: "List body metrics",
    description:
      "The athlete's body metrics (weight, resting heart rate, heart-rate variability, sleep), newest first. `type` picks one kind; `start` and `end` are local dates (`end` excluded). Page with `cursor`.",
    input: ListMetricsQuery.safeExtend({ athlete_id: athleteId }),
    output: rootObject(listMetricsOp.response.schema!),
    scope: listMetricsOp.scope!,
    run: async (ctx, a) => {
      const { athlete_id, ...query } = a;
      return listMetrics({ ctx, athleteId: athlete_id ?? "me", query });
    },
  }),
  tool({
    name: "get_training_summary",
    title: "Training summary",
    description:
      "Training volume per week (weeks start on Monday) or month and per sport: how many activities, distance, moving time and climbing. `start` and `end` are local dates (`end` excluded); by default the last 12 weeks or months, the current one included.",
    input: SummaryQuery.safeExtend({ athlete_id: athleteId }),
    output: rootObject(TrainingSummary),
    scope: "activities.read",
    run: (ctx, a) => {
      const { athlete_id, ...query } = a;
      return trainingSummary({ ctx, athleteId: athlete_id ?? "me", query });
    },
  }),
  tool({
    name: "list_team_athletes",
    title: "Athletes I coach",
    description:
      "Every athlete in the teams the athlete coaches or administers, with the team: their `athlete_id` may be passed to the other tools. At most 1,000 teams and 1,000 members of each are listed; `truncated` is true when there were more.",
    input: z.object({}),
    output: TeamAthletes,
    scope: "teams.read",
    run: async (ctx) => {
      const { data, truncated } = await listCoachedAthletes({ ctx, maxTeams: MAX_LISTED, maxMembers: MAX_LISTED });
      return truncated ? { data, truncated: true as const } : { data };
    },
  }),
];

/** What `list_team_athletes` lists at most: 1,000 teams, 1,000 members of each. */
const MAX_LISTED = 1000;

export const MCP_TOOLS: readonly McpTool[] = TOOLS;
