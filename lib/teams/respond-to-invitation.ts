import { and, eq } from "drizzle-orm";
import type { WriteCtx } from "../http/operation";
import { teamMemberships, teams } from "../db/schema";
import { ApiError } from "../http/errors";
import { requireAthleteActor } from "../athletes/reach";
import type { Membership } from "./console-schemas";

/**
 * The invited person's answer. Accepting makes the membership active, and from then on the
 * team's coaches reach them; declining deletes the invitation, so they can be invited again.
 */
export async function respondToInvitation({
  ctx,
  teamId,
  answer,
}: {
  ctx: WriteCtx;
  teamId: string;
  answer: "accept" | "decline";
}): Promise<Membership | null> {
  requireAthleteActor(ctx.actor);
  const pending = and(
    eq(teamMemberships.teamId, teamId),
    eq(teamMemberships.userId, ctx.actor.userId),
    eq(teamMemberships.status, "invited"),
  );
  const [row] =
    answer === "accept"
      ? await ctx.db.update(teamMemberships).set({ status: "active", joinedAt: new Date() }).where(pending).returning()
      : await ctx.db.delete(teamMemberships).where(pending).returning();
  if (!row) throw new ApiError("not_found", "You have no pending invitation to that team: it may have been answered or withdrawn.");
  if (answer === "decline") return null;
  const [team] = await ctx.db.select({ name: teams.name }).from(teams).where(eq(teams.id, teamId));
  return { team_id: teamId, team_name: team!.name, role: row.role, joined_at: row.joinedAt?.toISOString() ?? null };
}
