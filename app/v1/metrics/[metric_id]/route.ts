// GET /v1/metrics/{metric_id}: one metric, as a `metric.created` event names it; DELETE: delete one's own.
import { handle, route } from "@/lib/http/api-route";
import { deleteMetricOp, getMetricOp } from "@/lib/metrics/operations";
import { getMetric } from "@/lib/metrics/metrics";
import { deleteMetric } from "@/lib/metrics/delete-metric";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(getMetricOp, ({ ctx, params }) => getMetric({ ctx, metricId: params.metric_id })),
  DELETE: handle(deleteMetricOp, ({ ctx, params }) => deleteMetric({ ctx, metricId: params.metric_id })),
});
