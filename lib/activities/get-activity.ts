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

/**
 * An activity the actor reaches; anything else is the same 404 (SPEC §7). `forUpdate` then locks
 * the row for the rest of the caller's transaction: a write that decides from the stored values
 * then changes the row it read, and a concurrent write waits for it and reads the row again. The
 * lock is taken only once the row is known to be reachable, so someone who may not see it is
 * answered at once and never holds (or waits for) its lock.
 */
export async function findReachableActivity(ctx: Ctx, activityId: string, opts: { forUpdate?: boolean } = {}) {
  requireAthleteActor(ctx.actor);
  const q = ctx.db.select().from(activities).where(eq(activities.id, activityId)).limit(1);
  const [row] = await q;
  if (!row || !(await canReach(ctx.db, ctx.actor.userId, row.athleteId))) {
    throw activityNotFound(activityId);
  }
  if (!opts.forUpdate) return row;
  // Read again under the lock: a change committed meanwhile is what this write decides from.
  const [locked] = await q.for("update");
  if (!locked) throw activityNotFound(activityId);
  return locked;
}

export async function getActivity({ ctx, activityId }: { ctx: Ctx; activityId: string }) {
  return toActivityWire(await findReachableActivity(ctx, activityId));
}
