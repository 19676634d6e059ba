import { and, asc, eq, gt, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Ctx } from "../auth/actor";
import { teamMemberships, teams, users } from "../db/schema";
import { ApiError } from "../http/errors";
import { decodeIdCursor, page } from "../http/pagination";
import { requireAthleteActor } from "../athletes/reach";
import { coachesNow, coachingRole } from "./coaching";
import type { PageQuery } from "./schemas";

type Page = z.output<typeof PageQuery>;

/** Teams the actor coaches or administers: the ones whose members it may address. */
export async function listTeams({ ctx, query }: { ctx: Ctx; query: Page }) {
  requireAthleteActor(ctx.actor);
  const where: SQL[] = [
    eq(teamMemberships.userId, ctx.actor.userId),
    coachesNow(),
  ];
  if (query.cursor) where.push(gt(teams.id, decodeIdCursor(query.cursor, "team")));
  const rows = await ctx.db
    .select({ id: teams.id, name: teams.name, role: teamMemberships.role })
    .from(teamMemberships)
    .innerJoin(teams, eq(teams.id, teamMemberships.teamId))
    .where(and(...where))
    .orderBy(asc(teams.id))
    .limit(query.limit + 1);
  const p = page(rows, query.limit, (r) => [r.id]);
  return { data: p.data.map((r) => ({ ...r, role: coachingRole(r.role) })), next_cursor: p.next_cursor };
}

/** A team's active members, for a coach or admin of it; 403 `team_not_reachable` otherwise. */
export async function listTeamMembers({ ctx, teamId, query }: { ctx: Ctx; teamId: string; query: Page }) {
  requireAthleteActor(ctx.actor);
  const [mine] = await ctx.db
    .select({ role: teamMemberships.role })
    .from(teamMemberships)
    .where(
      and(
        eq(teamMemberships.teamId, teamId),
        eq(teamMemberships.userId, ctx.actor.userId),
        coachesNow(),
      ),
    );
  if (!mine) throw new ApiError("team_not_reachable", `This token's owner does not coach or administer team ${teamId}.`);
  const where: SQL[] = [eq(teamMemberships.teamId, teamId), eq(teamMemberships.status, "active")];
  if (query.cursor) where.push(gt(teamMemberships.userId, decodeIdCursor(query.cursor, "ath")));
  const rows = await ctx.db
    .select({ athlete_id: teamMemberships.userId, name: users.name, role: teamMemberships.role, joinedAt: teamMemberships.joinedAt })
    .from(teamMemberships)
    .innerJoin(users, eq(users.id, teamMemberships.userId))
    .where(and(...where))
    .orderBy(asc(teamMemberships.userId))
    .limit(query.limit + 1);
  const p = page(rows, query.limit, (r) => [r.athlete_id]);
  return {
    data: p.data.map(({ joinedAt, ...r }) => ({ ...r, joined_at: (joinedAt ?? new Date(0)).toISOString() })),
    next_cursor: p.next_cursor,
  };
}
