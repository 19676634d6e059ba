// GET /v1/athletes/{athlete_id}/metrics: list; POST /v1/athletes/me/metrics: record one.
import { handle, route } from "@/lib/http/api-route";
import { createMetricOp, listMetricsOp } from "@/lib/metrics/operations";
import { createMetric, listMetrics } from "@/lib/metrics/metrics";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(listMetricsOp, ({ ctx, params, query }) => listMetrics({ ctx, athleteId: params.athlete_id, query })),
  POST: handle(createMetricOp, ({ ctx, rawParams, body }) =>
    createMetric({ ctx, athleteId: String(rawParams.athlete_id), input: body }),
  ),
});
