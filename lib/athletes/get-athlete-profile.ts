import { eq } from "drizzle-orm";
import { selfUserColumns, type Ctx, type SelfRows } from "../auth/actor";
import { athleteProfiles, users } from "../db/schema";
import { ApiError } from "../http/errors";
import { requireAthleteActor, resolveReachableAthlete } from "./reach";
import type { AthleteWire } from "./schemas";

export async function getAthleteProfile({ ctx, athleteId }: { ctx: Ctx; athleteId: string }): Promise<AthleteWire> {
  requireAthleteActor(ctx.actor);
  const id = await resolveReachableAthlete(ctx.db, ctx.actor, athleteId);
  if (ctx.self && ctx.self.user.id === id) return toAthleteWire(ctx.self.user, ctx.self.profile);
  const [row] = await ctx.db
    .select({ user: selfUserColumns, profile: athleteProfiles })
    .from(users)
    .innerJoin(athleteProfiles, eq(athleteProfiles.userId, users.id))
    .where(eq(users.id, id));
  if (!row) throw new ApiError("not_found", `No athlete ${athleteId}.`);
  return toAthleteWire(row.user, row.profile);
}

export function toAthleteWire(
  user: SelfRows["user"],
  profile: SelfRows["profile"],
): AthleteWire {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    timezone: profile.timezone,
    has_subscription: profile.hasSubscription,
    trial_ends_at: profile.trialEndsAt?.toISOString() ?? null,
    uses_metric_units: profile.usesMetricUnits,
    connected_integrations: profile.connectedIntegrations,
  };
}
