import { and, eq } from "drizzle-orm";
import type { z } from "zod";
import { assertRoom, CAPS } from "../http/caps";
import { coachesNow } from "./coaching";
import type { WriteCtx } from "../http/operation";
import { teamMemberships, teams } from "../db/schema";
import { newId } from "../ids";
import { requireAthleteActor } from "../athletes/reach";
import type { CreateTeamInput } from "./console-schemas";
import type { Team } from "./schemas";

/** Creates a team coached by its creator, active at once: nobody has to accept their own team. */
export async function createTeam({
  ctx,
  input,
}: {
  ctx: WriteCtx;
  input: z.output<typeof CreateTeamInput>;
}): Promise<z.output<typeof Team>> {
  requireAthleteActor(ctx.actor);
  const userId = ctx.actor.userId;
  const cap = CAPS.coachedTeamsPerPerson;
  await assertRoom(ctx.db, {
    table: teamMemberships,
    owner: `coach:${userId}`,
    where: and(eq(teamMemberships.userId, userId), coachesNow()),
    cap,
    detail: `You coach ${cap} teams, the most one person may: delete one you are done with first.`,
  });
  const now = new Date();
  const id = newId("team");
  await ctx.db.insert(teams).values({ id, name: input.name, createdBy: userId, createdAt: now });
  await ctx.db.insert(teamMemberships).values({ teamId: id, userId, role: "coach", status: "active", invitedAt: now, joinedAt: now });
  return { id, name: input.name, role: "coach" };
}
