import { and, desc, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Ctx } from "../auth/actor";
import type { WriteCtx } from "../http/operation";
import { metrics } from "../db/schema";
import { compiledInsert } from "../db/client";
import { appendEvent } from "../events/append-event";
import { decodeLocalTimeCursor, page } from "../http/pagination";
import { newId } from "../ids";
import { toWireLocal } from "../time/local";
import { ApiError } from "../http/errors";
import { assertSelf, canReach, requireAthleteActor, resolveReachableAthlete } from "../athletes/reach";
import type { CreateMetricInput, ListMetricsQuery, MetricWire } from "./schemas";

function toMetricWire(m: typeof metrics.$inferSelect): MetricWire {
  return {
    id: m.id,
    athlete_id: m.athleteId,
    type: m.type as MetricWire["type"],
    value: m.value,
    measured_local: toWireLocal(m.measuredLocal),
    created_at: m.createdAt.toISOString(),
  };
}

export async function listMetrics({
  ctx,
  athleteId,
  query,
}: {
  ctx: Ctx;
  athleteId: string;
  query: z.output<typeof ListMetricsQuery>;
}) {
  requireAthleteActor(ctx.actor);
  const id = await resolveReachableAthlete(ctx.db, ctx.actor, athleteId);
  const where: SQL[] = [eq(metrics.athleteId, id)];
  if (query.start) where.push(gte(metrics.measuredLocal, `${query.start} 00:00:00`));
  if (query.end) where.push(lt(metrics.measuredLocal, `${query.end} 00:00:00`));
  if (query.type) where.push(eq(metrics.type, query.type));
  if (query.cursor) {
    const [at, lastId] = decodeLocalTimeCursor(query.cursor, "met");
    const bound = at.replace("T", " ");
    // The plain bound is redundant but estimable: without it the planner misjudges the row
    // comparison's selectivity and sorts every older row instead of walking the index.
    where.push(sql`${metrics.measuredLocal} <= ${bound}::timestamp`);
    where.push(sql`(${metrics.measuredLocal}, ${metrics.id}) < (${bound}::timestamp, ${lastId})`);
  }
  const rows = await ctx.db
    .select()
    .from(metrics)
    .where(and(...where))
    .orderBy(desc(metrics.measuredLocal), desc(metrics.id))
    .limit(query.limit + 1);
  const p = page(rows, query.limit, (r) => [r.measuredLocal, r.id]);
  return { data: p.data.map(toMetricWire), next_cursor: p.next_cursor };
}

/**
 * One metric the actor reaches (its athlete's, or a coach's active member's), as a
 * `metric.created` event's `object_id` names it (SPEC §2.2: the subscriber calls the API for
 * detail). Anything else is the same 404 as an id that does not exist (SPEC §7).
 */
export async function getMetric({ ctx, metricId }: { ctx: Ctx; metricId: string }): Promise<MetricWire> {
  requireAthleteActor(ctx.actor);
  const [row] = await ctx.db.select().from(metrics).where(eq(metrics.id, metricId)).limit(1);
  if (!row || !(await canReach(ctx.db, ctx.actor.userId, row.athleteId))) {
    throw new ApiError("not_found", `Metric ${metricId} was not found.`);
  }
  return toMetricWire(row);
}

/** The insert of a metric, written once (lib/db/client.ts). */
const insertMetric = compiledInsert("create_metric", metrics, ["id", "athleteId", "type", "value", "measuredLocal"]);

/** Records a metric for the actor and emits `metric.created` in the caller's transaction. */
export async function createMetric({
  ctx,
  athleteId,
  input,
}: {
  ctx: WriteCtx;
  athleteId: string;
  input: z.output<typeof CreateMetricInput>;
}) {
  requireAthleteActor(ctx.actor);
  assertSelf(ctx.actor, athleteId);
  const userId = ctx.actor.userId;
  const id = newId("met");
  // One round trip for both, as createActivity does.
  const [[row]] = await Promise.all([
    insertMetric(ctx.db, { id, athleteId: userId, type: input.type, value: input.value, measuredLocal: input.measured_local.replace("T", " ") }),
    appendEvent(ctx.db, { type: "metric.created", athleteId: userId, objectId: id, objectType: "metric" }),
  ]);
  return toMetricWire(row!);
}
