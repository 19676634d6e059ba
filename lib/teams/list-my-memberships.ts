import { and, asc, count, desc, eq, inArray } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Ctx } from "../auth/actor";
import { teamMemberships, teams, users } from "../db/schema";
import { requireAthleteActor } from "../athletes/reach";
import { coachesNow } from "./coaching";
import type { MyMemberships } from "./console-schemas";

const inviter = alias(users, "inviter");

/**
 * The actor's pending invitations (newest first) and the teams they belong to, in any role.
 * An invitation names its sender by their account's email as well as the name they chose, and
 * each team says whether the person may leave it, by the rule `leaveTeam` applies: an athlete
 * always, a coach or admin only while someone else coaches the team.
 */
export async function listMyMemberships({ ctx }: { ctx: Ctx }): Promise<MyMemberships> {
  requireAthleteActor(ctx.actor);
  const rows = await ctx.db
    .select({ membership: teamMemberships, teamName: teams.name, inviterName: inviter.name, inviterEmail: inviter.email })
    .from(teamMemberships)
    .innerJoin(teams, eq(teams.id, teamMemberships.teamId))
    .leftJoin(inviter, eq(inviter.id, teamMemberships.invitedBy))
    .where(eq(teamMemberships.userId, ctx.actor.userId))
    .orderBy(desc(teamMemberships.invitedAt), asc(teams.name));
  const coached = rows.filter((r) => r.membership.status === "active" && r.membership.role !== "athlete").map((r) => r.membership.teamId);
  const coachCounts = coached.length
    ? await ctx.db
        .select({ teamId: teamMemberships.teamId, coaches: count() })
        .from(teamMemberships)
        .where(and(inArray(teamMemberships.teamId, coached), coachesNow()))
        .groupBy(teamMemberships.teamId)
    : [];
  const coachesOf = new Map(coachCounts.map((c) => [c.teamId, Number(c.coaches)]));
  return {
    invitations: rows
      .filter((r) => r.membership.status === "invited")
      .map(({ membership: m, teamName, inviterName, inviterEmail }) => ({
        team_id: m.teamId,
        team_name: teamName,
        role: m.role,
        invited_by: inviterName,
        invited_by_email: inviterEmail,
        invited_at: m.invitedAt.toISOString(),
      })),
    teams: rows
      .filter((r) => r.membership.status === "active")
      .sort((a, b) => a.teamName.localeCompare(b.teamName))
      .map(({ membership: m, teamName }) => ({
        team_id: m.teamId,
        team_name: teamName,
        role: m.role,
        joined_at: m.joinedAt?.toISOString() ?? null,
        can_leave: m.role === "athlete" || (coachesOf.get(m.teamId) ?? 0) > 1,
      })),
  };
}
