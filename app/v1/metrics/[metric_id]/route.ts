// GET /v1/metrics/{metric_id}: one metric, as a `metric.created` event names it.
import { handle, route } from "@/lib/http/api-route";
import { getMetricOp } from "@/lib/metrics/operations";
import { getMetric } from "@/lib/metrics/metrics";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(getMetricOp, ({ ctx, params }) => getMetric({ ctx, metricId: params.metric_id })),
});
