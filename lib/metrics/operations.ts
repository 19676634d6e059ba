import { z } from "zod";
import { defineOperation } from "../http/operation";
import { AthleteIdParam } from "../http/schemas";
import { CreateMetricInput, ListMetricsQuery, Metric, MetricList } from "./schemas";

const MetricIdParam = z.string().min(1).max(64).meta({ example: "met_2bQ9mN4rT1vB8kL3pZaX9c" });

export const listMetricsOp = defineOperation({
  method: "GET",
  path: "/v1/athletes/{athlete_id}/metrics",
  operationId: "listMetrics",
  summary: "List an athlete's metrics",
  description: "Newest first; `start`/`end` are local dates (`end` excluded); filter by `type`.",
  tag: "Metrics",
  auth: "athlete",
  scope: "metrics.read",
  params: z.object({ athlete_id: AthleteIdParam }),
  query: ListMetricsQuery,
  response: { status: 200, description: "A page of metrics.", schema: MetricList },
  errors: ["invalid_request", "invalid_date", "invalid_enum_value", "invalid_parameter_combination", "invalid_cursor", "athlete_not_reachable"],
});

export const getMetricOp = defineOperation({
  method: "GET",
  path: "/v1/metrics/{metric_id}",
  operationId: "getMetric",
  summary: "Get a metric",
  description:
    "One metric by its id, as a `metric.created` event names it (`object_id`). The athlete's own and, for a coach, an active member's; any other id is 404, as one that does not exist.",
  tag: "Metrics",
  auth: "athlete",
  scope: "metrics.read",
  params: z.object({ metric_id: MetricIdParam }),
  response: { status: 200, description: "The metric.", schema: Metric },
  errors: ["not_found"],
});

export const deleteMetricOp = defineOperation({
  method: "DELETE",
  path: "/v1/metrics/{metric_id}",
  operationId: "deleteMetric",
  summary: "Delete a metric",
  description:
    "Deletes one of the token's athlete's own metrics (a value recorded by mistake) and emits `metric.deleted`. A coach reads a member's metrics but does not delete them. Accepts `Idempotency-Key`.",
  tag: "Metrics",
  auth: "athlete",
  scope: "metrics.write",
  params: z.object({ metric_id: MetricIdParam }),
  idempotent: true,
  response: { status: 204, description: "Deleted; `GET` on it answers 404 from now on." },
  errors: ["athlete_not_reachable", "not_found", "idempotency_key_in_use", "idempotency_key_reused"],
});

export const createMetricOp = defineOperation({
  method: "POST",
  path: "/v1/athletes/me/metrics",
  operationId: "createMetric",
  summary: "Record a metric",
  description: "Records a metric for the token's athlete and emits `metric.created`. Accepts `Idempotency-Key`.",
  tag: "Metrics",
  auth: "athlete",
  scope: "metrics.write",
  body: CreateMetricInput,
  idempotent: true,
  response: { status: 201, description: "The metric recorded.", schema: Metric, location: (m) => `/v1/metrics/${m.id}` },
  errors: ["invalid_request", "invalid_date", "invalid_enum_value", "payload_too_large", "idempotency_key_in_use", "idempotency_key_reused"],
});
