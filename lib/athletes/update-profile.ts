import { eq } from "drizzle-orm";
import { z } from "zod";
import type { WriteCtx } from "../http/operation";
import { athleteProfiles, users } from "../db/schema";
import { canonicalTimezone, isValidTimezone } from "../time/local";
import { HIDDEN_IN_NAME_MESSAGE, hasHiddenCharacters } from "../text";
import { getAthleteProfile } from "./get-athlete-profile";
import { requireAthleteActor } from "./reach";

export const UpdateProfileInput = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, "enter your name")
    .max(100, "use at most 100 characters")
    .refine((name) => !hasHiddenCharacters(name), HIDDEN_IN_NAME_MESSAGE)
    .optional(),
  timezone: z
    .string()
    .superRefine((tz, c) => {
      if (isValidTimezone(tz)) return;
      // Another name ICU knows for a zone (US/Eastern, Etc/UTC, another case): the one to send.
      const named = canonicalTimezone(tz);
      c.addIssue({ code: "custom", message: named ? `must be an IANA timezone name: send ${named}, this service's name for that zone` : "must be an IANA timezone name", params: { code: "invalid_enum_value" } });
    })
    .optional(),
  uses_metric_units: z.boolean().optional(),
});

/** The athlete's own settings (console): name, timezone, units. */
export async function updateProfile({ ctx, input }: { ctx: WriteCtx; input: z.output<typeof UpdateProfileInput> }) {
  requireAthleteActor(ctx.actor);
  const userId = ctx.actor.userId;
  if (input.name !== undefined) await ctx.db.update(users).set({ name: input.name }).where(eq(users.id, userId));
  if (input.timezone !== undefined || input.uses_metric_units !== undefined) {
    await ctx.db
      .update(athleteProfiles)
      .set({ timezone: input.timezone, usesMetricUnits: input.uses_metric_units, updatedAt: new Date() })
      .where(eq(athleteProfiles.userId, userId));
  }
  return getAthleteProfile({ ctx, athleteId: "me" });
}
