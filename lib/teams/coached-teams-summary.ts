import { and, eq, inArray, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Db } from "../db/client";
import { teamMemberships, teams } from "../db/schema";

const member = alias(teamMemberships, "member");

/**
 * The teams `userId` coaches or administers, each with how many athletes accepted: whose data a
 * token of theirs reaches besides their own (SPEC §6.2 (5)), for a consent screen to say so.
 */
export async function coachedTeamsSummary(db: Db, userId: string): Promise<{ name: string; athletes: number }[]> {
  const rows = await db
    .select({ name: teams.name, athletes: sql<number>`count(${member.userId})::int` })
    .from(teamMemberships)
    .innerJoin(teams, eq(teams.id, teamMemberships.teamId))
    .leftJoin(member, and(eq(member.teamId, teamMemberships.teamId), eq(member.status, "active"), eq(member.role, "athlete")))
    .where(and(eq(teamMemberships.userId, userId), eq(teamMemberships.status, "active"), inArray(teamMemberships.role, ["coach", "admin"])))
    .groupBy(teams.id, teams.name)
    .orderBy(teams.name);
  return rows.filter((r) => r.athletes > 0);
}
