import { and, eq, inArray } from "drizzle-orm";
import type { WriteCtx } from "../http/operation";
import { teamMemberships, teams, users } from "../db/schema";
import { ApiError } from "../http/errors";
import { requireAthleteActor } from "../athletes/reach";
import { coachedTeamName } from "./invite-athlete";
import { coachesNow } from "./coaching";

/**
 * The signed-in person leaves a team they belong to. From the commit on, the team's coaches
 * reach them no more, through every token they hold (reach is read on each request). A coach
 * or admin may leave too, unless nobody else would be left to run the team.
 */
export async function leaveTeam({ ctx, teamId }: { ctx: WriteCtx; teamId: string }): Promise<null> {
  requireAthleteActor(ctx.actor);
  const userId = ctx.actor.userId;
  // The team's row first, in every leave: two coaches leaving at once take their turns on it,
  // where locking their own rows first would hold one each and deadlock on the other's.
  const [team] = await ctx.db.select({ name: teams.name }).from(teams).where(eq(teams.id, teamId)).for("update");
  const [mine] = team
    ? await ctx.db
        .select({ role: teamMemberships.role })
        .from(teamMemberships)
        .where(and(eq(teamMemberships.teamId, teamId), eq(teamMemberships.userId, userId), eq(teamMemberships.status, "active")))
    : [];
  if (!team || !mine) throw new ApiError("not_found", "You are not a member of that team (any more).");
  if (mine.role !== "athlete") {
    // Read under the team's lock: another coach's leave has committed or waits its turn.
    const runners = await ctx.db
      .select({ userId: teamMemberships.userId })
      .from(teamMemberships)
      .where(and(eq(teamMemberships.teamId, teamId), coachesNow()));
    if (!runners.some((r) => r.userId !== userId)) {
      throw new ApiError("conflict", `You are the only coach of ${team.name}: a team needs one. Delete the team instead, if it is done with.`);
    }
  }
  await ctx.db.delete(teamMemberships).where(and(eq(teamMemberships.teamId, teamId), eq(teamMemberships.userId, userId)));
  return null;
}

/**
 * A coach or admin takes someone off their team: an athlete who accepted (by id), or an
 * invitation not yet answered (by the email it was sent to). Coaches and admins are not taken
 * off by others; each leaves on their own.
 */
export async function removeFromTeam({
  ctx,
  teamId,
  member,
}: {
  ctx: WriteCtx;
  teamId: string;
  member: { athleteId: string } | { email: string };
}): Promise<null> {
  requireAthleteActor(ctx.actor);
  const teamName = await coachedTeamName(ctx.db, ctx.actor.userId, teamId, "remove people from it");
  if ("email" in member) {
    const email = member.email.toLowerCase();
    const [row] = await ctx.db
      .delete(teamMemberships)
      .where(
        and(
          eq(teamMemberships.teamId, teamId),
          eq(teamMemberships.status, "invited"),
          inArray(teamMemberships.userId, ctx.db.select({ id: users.id }).from(users).where(eq(users.email, email))),
        ),
      )
      .returning();
    if (!row) throw new ApiError("not_found", `${teamName} has no pending invitation for that email: it may have been answered or withdrawn.`);
    return null;
  }
  const [row] = await ctx.db
    .delete(teamMemberships)
    .where(
      and(
        eq(teamMemberships.teamId, teamId),
        eq(teamMemberships.userId, member.athleteId),
        eq(teamMemberships.status, "active"),
        eq(teamMemberships.role, "athlete"),
      ),
    )
    .returning();
  if (row) return null;
  const [other] = await ctx.db
    .select({ role: teamMemberships.role })
    .from(teamMemberships)
    .where(and(eq(teamMemberships.teamId, teamId), eq(teamMemberships.userId, member.athleteId), eq(teamMemberships.status, "active")));
  if (other) throw new ApiError("conflict", `Coaches and admins of ${teamName} are not removed by others: each leaves the team on their own.`);
  throw new ApiError("not_found", `That athlete is not on ${teamName} (any more): they may have left or been removed.`);
}

/**
 * A coach or admin deletes their team: every membership and unanswered invitation goes with it
 * (their rows cascade), so from the commit on nobody reaches its athletes through it, through
 * any token. The athletes keep everything of their own. The team's row is locked first, as a
 * leave locks it, and an invitation reads it under a share lock, so an invitation in flight
 * either lands before the delete (and goes with it) or finds the team gone.
 */
export async function deleteTeam({ ctx, teamId }: { ctx: WriteCtx; teamId: string }): Promise<null> {
  requireAthleteActor(ctx.actor);
  // Refused before any lock, as a change to someone else's activity is: only a coach's request
  // takes the team's lock (and is then checked again under it, a leave having perhaps come first).
  await coachedTeamName(ctx.db, ctx.actor.userId, teamId, "delete it", { lock: false });
  await ctx.db.select({ id: teams.id }).from(teams).where(eq(teams.id, teamId)).for("update");
  await coachedTeamName(ctx.db, ctx.actor.userId, teamId, "delete it", { lock: false });
  await ctx.db.delete(teams).where(eq(teams.id, teamId));
  return null;
}
