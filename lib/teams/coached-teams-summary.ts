import { and, eq, ne, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Db } from "../db/client";
import { teamMemberships, teams } from "../db/schema";
import { coachesNow } from "./coaching";

const member = alias(teamMemberships, "member");

/**
 * The teams `userId` coaches or administers, each with how many other members accepted: whose
 * data a token of theirs reaches besides their own (SPEC §6.2 (5); `canReach`: every active
 * member, co-coaches too), for a consent screen to say so.
 */
export async function coachedTeamsSummary(db: Db, userId: string): Promise<{ id: string; name: string; members: number }[]> {
  const rows = await db
    .select({ id: teams.id, name: teams.name, members: sql<number>`count(${member.userId})::int` })
    .from(teamMemberships)
    .innerJoin(teams, eq(teams.id, teamMemberships.teamId))
    .leftJoin(member, and(eq(member.teamId, teamMemberships.teamId), eq(member.status, "active"), ne(member.userId, userId)))
    .where(and(eq(teamMemberships.userId, userId), coachesNow()))
    .groupBy(teams.id, teams.name)
    .orderBy(teams.name);
  return rows.filter((r) => r.members > 0);
}
