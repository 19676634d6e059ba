import { z } from "zod";
import { Instant } from "../http/schemas";

export const Athlete = z
  .object({
    id: z.string().meta({ example: "ath_4f9XcQ2mN7rT1vB8kL3pZa" }),
    name: z.string().nullable().optional(),
    email: z.string().nullable().optional(),
    timezone: z.string().nullable().optional().meta({ description: "IANA timezone; every activity time is wall-clock time in it.", example: "Europe/Oslo" }),
    has_subscription: z.boolean().meta({ description: "Whether the athlete has a paid subscription." }),
    trial_ends_at: Instant.nullable().meta({ description: "End of the athlete's trial, if any. A running trial counts as a subscription for API access." }),
    uses_metric_units: z.boolean().meta({ description: "Display preference of the service's own apps. The API always answers in SI units." }),
    connected_integrations: z.array(z.string()).meta({ example: ["garmin", "wahoo"] }),
  })
  .meta({ id: "Athlete", description: "An athlete's profile (SPEC §2.1)." });
export type AthleteWire = z.input<typeof Athlete>;
