import { eq } from "drizzle-orm";
import type { Ctx } from "../auth/actor";
import { activities } from "../db/schema";
import { ApiError } from "../http/errors";
import { canReach, requireAthleteActor } from "../athletes/reach";
import { toActivityWire } from "./to-wire";

/**
 * The one answer for an activity that does not exist or that the caller cannot reach (SPEC §7:
 * the same 404 for both), in words an assistant reading only the text understands too
 * (CONTRACT §12: "a tool error saying it was not found").
 */
export function activityNotFound(activityId: string): ApiError {
  return new ApiError("not_found", `Activity ${activityId} was not found.`);
}

/** An activity the actor reaches; anything else is the same 404 (SPEC §7). */
export async function findReachableActivity(ctx: Ctx, activityId: string) {
  requireAthleteActor(ctx.actor);
  const [row] = await ctx.db.select().from(activities).where(eq(activities.id, activityId)).limit(1);
  if (!row || !(await canReach(ctx.db, ctx.actor.userId, row.athleteId))) {
    throw activityNotFound(activityId);
  }
  return row;
}

export async function getActivity({ ctx, activityId }: { ctx: Ctx; activityId: string }) {
  return toActivityWire(await findReachableActivity(ctx, activityId));
}
