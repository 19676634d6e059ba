import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { Ctx } from "../auth/actor";
import { teamMemberships, teams, users } from "../db/schema";
import { requireAthleteActor } from "../athletes/reach";
import { coachesNow } from "./coaching";

export type CoachedAthlete = { athlete_id: string; name: string | null; team_id: string; team_name: string };

/**
 * Every active member but the actor of the teams the actor coaches or administers, with the
 * team, in one statement: the first `maxTeams` teams by id and the first `maxMembers` members of
 * each by id (the actor counted among them), as paging `listTeams` and then `listTeamMembers`
 * would find them. `truncated` when there were more teams or members than that. One query
 * whatever the number of teams: a person may coach many, and a walk over them page by page cost
 * two queries a team.
 */
export async function listCoachedAthletes({
  ctx,
  maxTeams,
  maxMembers,
}: {
  ctx: Ctx;
  maxTeams: number;
  maxMembers: number;
}): Promise<{ data: CoachedAthlete[]; truncated: boolean }> {
  requireAthleteActor(ctx.actor);
  const self = ctx.actor.userId;
  const mine = ctx.db
    .select({ id: teams.id, name: teams.name })
    .from(teamMemberships)
    .innerJoin(teams, eq(teams.id, teamMemberships.teamId))
    .where(and(eq(teamMemberships.userId, self), coachesNow()))
    .orderBy(asc(teams.id))
    .limit(maxTeams + 1)
    .as("mine");
  const members = ctx.db
    .select({
      teamId: sql<string>`${mine.id}`.as("team_id"),
      teamName: sql<string>`${mine.name}`.as("team_name"),
      athleteId: sql<string>`${teamMemberships.userId}`.as("athlete_id"),
      name: sql<string | null>`${users.name}`.as("athlete_name"),
      n: sql<number>`row_number() over (partition by ${teamMemberships.teamId} order by ${teamMemberships.userId})`.mapWith(Number).as("n"),
      teamN: sql<number>`dense_rank() over (order by ${mine.id})`.mapWith(Number).as("team_n"),
    })
    .from(mine)
    .innerJoin(teamMemberships, and(eq(teamMemberships.teamId, mine.id), eq(teamMemberships.status, "active")))
    .innerJoin(users, eq(users.id, teamMemberships.userId))
    .as("members");
  const rows = await ctx.db
    .select()
    .from(members)
    .where(lte(members.n, maxMembers + 1))
    .orderBy(asc(members.teamId), asc(members.athleteId));
  let truncated = false;
  const data: CoachedAthlete[] = [];
  for (const r of rows) {
    if (r.teamN > maxTeams || r.n > maxMembers) {
      truncated = true;
      continue;
    }
    if (r.athleteId !== self) data.push({ athlete_id: r.athleteId, name: r.name, team_id: r.teamId, team_name: r.teamName });
  }
  return { data, truncated };
}
