import { eq, sql } from "drizzle-orm";
import type { Ctx } from "../auth/actor";
import { activities } from "../db/schema";
import { batchedLookup } from "../db/batcher";
import { perDatabase, type Db } from "../db/client";
import { ApiError } from "../http/errors";
import { rawJson, type RawJson } from "../http/raw-json";
import { canReach, requireAthleteActor } from "../athletes/reach";
import { activityVersion, activityWireJsonOf } from "./kept-wire-json";

/**
 * The one answer for an activity that does not exist or that the caller cannot reach (SPEC §7:
 * the same 404 for both), in words an assistant reading only the text understands too
 * (CONTRACT §12: "a tool error saying it was not found").
 */
export function activityNotFound(activityId: string): ApiError {
  return new ApiError("not_found", `Activity ${activityId} was not found.`);
}

/**
 * The one reach rule for an activity read by id: `row` (its owner, as read) when the actor
 * reaches that athlete (SPEC §5.5), else the same 404 as an id that does not exist (SPEC §7),
 * so ids cannot be probed. Every read of an activity by id goes through it.
 */
export async function reachedActivity<R extends { athleteId: string }>(ctx: Ctx, activityId: string, row: R | undefined): Promise<R> {
  requireAthleteActor(ctx.actor);
  if (!row || !(await canReach(ctx.db, ctx.actor.userId, row.athleteId))) throw activityNotFound(activityId);
  return row;
}

/**
 * An activity the actor may change or delete: their own. One they cannot reach is the same 404
 * as an id that does not exist (SPEC §7); one they reach but do not own (a member's, read by
 * their coach) is 403, said before any lock is taken. `forUpdate` then locks the row for the
 * rest of the caller's transaction: a write that decides from the stored values then changes
 * the row it read, and a concurrent write waits for it and reads the row again. Only the owner's
 * request takes (or waits for) the lock: anyone refused is answered at once.
 */
export async function findOwnActivity(ctx: Ctx, activityId: string, { doing, forUpdate = false }: { doing: "change" | "delete"; forUpdate?: boolean }) {
  requireAthleteActor(ctx.actor);
  const q = ctx.db.select().from(activities).where(eq(activities.id, activityId)).limit(1);
  const row = await reachedActivity(ctx, activityId, (await q)[0]);
  if (row.athleteId !== ctx.actor.userId) {
    throw new ApiError("athlete_not_reachable", `Only the athlete who owns an activity can ${doing} it.`);
  }
  if (!forUpdate) return row;
  // Read again under the lock: a change committed meanwhile is what this write decides from.
  const [locked] = await q.for("update");
  if (!locked) throw activityNotFound(activityId);
  return locked;
}

/**
 * An activity's owner and row version by id, looked up in batches (lib/db/batcher.ts) with a
 * statement built once per database: concurrent reads of activities share one statement.
 */
const identities = perDatabase((db: Db) => {
  const statement = db
    .select({ id: activities.id, athleteId: activities.athleteId, version: activityVersion })
    .from(activities)
    .where(sql`${activities.id} in (select jsonb_array_elements_text(${sql.placeholder("ids")}::jsonb))`)
    .prepare("activity_identities");
  return batchedLookup((ids) => statement.execute({ ids }), (row) => row.id);
});

/**
 * The id, owner and row version of an activity the actor reaches, for a read that needs no more
 * of the row (its JSON, its laps); anything else is the same 404 as `findOwnActivity`'s.
 * Concurrent requests for the same id share the one row the batch read: treat it as read-only.
 */
export async function reachableActivityIdentity(ctx: Ctx, activityId: string) {
  requireAthleteActor(ctx.actor);
  return reachedActivity(ctx, activityId, await identities(ctx.db)(activityId));
}

/**
 * An activity the actor reaches, as its wire JSON. Read as a page of the list reads its rows:
 * the owner and the row version first, then the JSON kept for that version, which PostgreSQL
 * builds only when this process has not kept it (`activityWireJsonOf`), so reading an activity
 * again costs one batched lookup and no mapping. Deleted between the two reads: 404.
 */
export async function getActivity({ ctx, activityId }: { ctx: Ctx; activityId: string }): Promise<RawJson> {
  const row = await reachableActivityIdentity(ctx, activityId);
  const [json] = await activityWireJsonOf(ctx.db, [row]);
  if (json === undefined) throw activityNotFound(activityId);
  return rawJson(json);
}
