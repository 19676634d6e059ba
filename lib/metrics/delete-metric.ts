import { eq } from "drizzle-orm";
import type { WriteCtx } from "../http/operation";
import { metrics } from "../db/schema";
import { appendEvent } from "../events/append-event";
import { ApiError } from "../http/errors";
import { requireAthleteActor } from "../athletes/reach";
import { getMetric } from "./metrics";

/**
 * Deletes one of the actor's own metrics and emits `metric.deleted` in the caller's transaction.
 * One the actor cannot reach is the same 404 as an unknown id; a member's, read by their coach,
 * is 403: a coach reads metrics but does not delete them.
 */
export async function deleteMetric({ ctx, metricId }: { ctx: WriteCtx; metricId: string }): Promise<void> {
  const metric = await getMetric({ ctx, metricId });
  requireAthleteActor(ctx.actor);
  if (metric.athlete_id !== ctx.actor.userId) {
    throw new ApiError("athlete_not_reachable", "Only the athlete who recorded a metric can delete it.");
  }
  const deleted = await ctx.db.delete(metrics).where(eq(metrics.id, metricId)).returning({ id: metrics.id });
  // A concurrent delete of the same metric committed first.
  if (!deleted.length) throw new ApiError("not_found", `Metric ${metricId} was not found.`);
  await appendEvent(ctx.db, { type: "metric.deleted", athleteId: ctx.actor.userId, objectId: metricId, objectType: "metric" });
}
