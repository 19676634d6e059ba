import { z } from "zod";
import { dateRangeListQuery, Instant, LocalDateTime, listOf } from "../http/schemas";

export const METRIC_TYPES = ["body_mass_kg", "resting_heart_rate_hz", "heart_rate_variability_s", "sleep_duration_s"] as const;
export const MetricType = z.enum(METRIC_TYPES).meta({ id: "MetricType" });

/** Plausible bounds per type, in SI units. */
export const METRIC_BOUNDS: Record<(typeof METRIC_TYPES)[number], [number, number]> = {
  body_mass_kg: [1, 500],
  resting_heart_rate_hz: [0.2, 4],
  heart_rate_variability_s: [0.001, 1],
  sleep_duration_s: [0, 86_400],
};

export const Metric = z
  .object({
    id: z.string().meta({ example: "met_2bQ9mN4rT1vB8kL3pZaX9c" }),
    athlete_id: z.string(),
    type: MetricType,
    value: z.number(),
    measured_local: LocalDateTime,
    created_at: Instant,
  })
  .meta({ id: "Metric", description: "A body metric, in the SI unit its type names." });
export type MetricWire = z.input<typeof Metric>;

export const CreateMetricInput = z
  .strictObject({
    type: MetricType,
    value: z.number().meta({
      description: `In the type's SI unit, within its bounds: ${METRIC_TYPES.map((t) => `\`${t}\` ${METRIC_BOUNDS[t][0]}–${METRIC_BOUNDS[t][1]}`).join(", ")}.`,
    }),
    measured_local: LocalDateTime,
  })
  .superRefine((m, ctx) => {
    const [lo, hi] = METRIC_BOUNDS[m.type];
    if (m.value < lo || m.value > hi) {
      ctx.addIssue({ code: "custom", path: ["value"], message: `${m.type} must be between ${lo} and ${hi}` });
    }
  })
  .meta({ id: "CreateMetric", example: { type: "body_mass_kg", value: 68.5, measured_local: "2026-03-01T07:00:00" } });

export const ListMetricsQuery = dateRangeListQuery("First local date included.", { type: MetricType.optional() });

export const MetricList = listOf(Metric, "MetricList");
