import { and, asc, eq, inArray } from "drizzle-orm";
import type { Ctx } from "../auth/actor";
import { teamMemberships, teams, users } from "../db/schema";
import { requireAthleteActor } from "../athletes/reach";
import type { CoachedTeam } from "./console-schemas";
import { rosterEntry } from "./roster-entry";
import { coachesNow, coachingRole } from "./coaching";

const ROLE_ORDER = { coach: 0, admin: 1, athlete: 2 } as const;

/**
 * The teams the actor coaches or administers, each with its whole roster, invitations
 * included (by email only, until accepted): staff first, then members who joined, then those
 * still invited.
 */
export async function listCoachedTeams({ ctx }: { ctx: Ctx }): Promise<CoachedTeam[]> {
  requireAthleteActor(ctx.actor);
  const mine = await ctx.db
    .select({ id: teams.id, name: teams.name, role: teamMemberships.role })
    .from(teamMemberships)
    .innerJoin(teams, eq(teams.id, teamMemberships.teamId))
    .where(
      and(
        eq(teamMemberships.userId, ctx.actor.userId),
        coachesNow(),
      ),
    )
    .orderBy(asc(teams.name), asc(teams.id));
  if (mine.length === 0) return [];
  const roster = await ctx.db
    .select({ membership: teamMemberships, name: users.name, email: users.email })
    .from(teamMemberships)
    .innerJoin(users, eq(users.id, teamMemberships.userId))
    .where(inArray(teamMemberships.teamId, mine.map((t) => t.id)));
  return mine.map((t) => ({
    id: t.id,
    name: t.name,
    role: coachingRole(t.role),
    members: roster
      .filter((r) => r.membership.teamId === t.id)
      .map(({ membership, name, email }) => rosterEntry(membership, { name, email }))
      .sort(
        (a, b) =>
          ROLE_ORDER[a.role] - ROLE_ORDER[b.role] ||
          Number(a.status === "invited") - Number(b.status === "invited") ||
          (a.name ?? a.email).localeCompare(b.name ?? b.email),
      ),
  }));
}
