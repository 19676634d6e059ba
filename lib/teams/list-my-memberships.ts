import { asc, desc, eq } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Ctx } from "../auth/actor";
import { teamMemberships, teams, users } from "../db/schema";
import { requireAthleteActor } from "../athletes/reach";
import type { MyMemberships } from "./console-schemas";

const inviter = alias(users, "inviter");

/**
 * The actor's pending invitations (newest first) and the teams they belong to, in any role.
 * An invitation names its sender by their account's email as well as the name they chose.
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
      })),
  };
}
