import { z } from "zod";
import { Instant } from "../http/schemas";

export const USAGE_DAYS = 30;

export const UsageDay = z.object({
  date: z.string().meta({ description: "A UTC calendar day, `YYYY-MM-DD`.", example: "2026-03-01", format: "date" }),
  requests: z.number().int().min(0).meta({ description: "`/v1` requests made with the app's tokens that day, every token together." }),
});

export const UsageWindow = z.object({
  name: z.enum(["15min", "daily"]).meta({ description: "The window, as named in the `RateLimit-Policy` header." }),
  window_s: z.number().int().meta({ description: "The window's length in seconds." }),
  limit: z.number().int().meta({ description: "Requests allowed in the window." }),
  used: z.number().int().meta({ description: "Requests counted so far, this one included." }),
  remaining: z.number().int().min(0),
  resets_at: Instant.meta({ description: "When the window starts again from zero." }),
});

export const AppUsage = z
  .object({
    client_id: z.string(),
    days: z.array(UsageDay).meta({
      description: `The last ${USAGE_DAYS} UTC days, oldest first, ending today; days without requests are present with 0.`,
    }),
    windows: z.array(UsageWindow).meta({ description: "The current rate-limit windows, shared by every token issued to the app." }),
  })
  .meta({ id: "AppUsage" });
export type AppUsage = z.output<typeof AppUsage>;
