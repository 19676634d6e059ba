import { and, eq, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Db } from "../db/client";
import { teamMemberships } from "../db/schema";
import type { AthleteActor } from "../auth/actor";
import { ApiError } from "../http/errors";
import { coachesNow } from "../teams/coaching";

const viewer = alias(teamMemberships, "viewer");
const target = alias(teamMemberships, "target");

/**
 * SPEC §5.5: a person reaches themself and, as an active coach or admin of a team, its
 * active members. An invited athlete who has not accepted is not reached.
 */
export async function canReach(db: Db, viewerId: string, athleteId: string): Promise<boolean> {
  if (viewerId === athleteId) return true;
  const rows = await db
    .select({ one: sql`1` })
    .from(viewer)
    .innerJoin(target, eq(target.teamId, viewer.teamId))
    .where(
      and(
        eq(viewer.userId, viewerId),
        coachesNow(viewer),
        eq(target.userId, athleteId),
        eq(target.status, "active"),
      ),
    )
    .limit(1);
  return rows.length > 0;
}

/**
 * Resolves a path's `athlete_id` (`me` or an id) to an athlete the actor reaches, or 403.
 * Unknown ids get the same 403 as known unreachable ones, so ids cannot be probed.
 */
export async function resolveReachableAthlete(db: Db, actor: AthleteActor, raw: string): Promise<string> {
  const id = raw === "me" ? actor.userId : raw;
  if (await canReach(db, actor.userId, id)) return id;
  throw new ApiError("athlete_not_reachable", `This token may not act on athlete ${raw}.`);
}

export function requireAthleteActor(actor: { kind: string }): asserts actor is AthleteActor {
  if (actor.kind === "app") {
    throw new ApiError("client_credentials_not_allowed", "A client-credentials token cannot act on athletes.");
  }
}

/** Writes go only to the actor's own records: `me` or the actor's own id. */
export function assertSelf(actor: AthleteActor, athleteId: string): void {
  if (athleteId !== "me" && athleteId !== actor.userId) {
    throw new ApiError("athlete_not_reachable", "Records can only be created for `me`, the token's own athlete.");
  }
}
