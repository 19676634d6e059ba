import { and, eq, sql } from "drizzle-orm";
import type { z } from "zod";
import type { WriteCtx } from "../http/operation";
import type { Db } from "../db/client";
import { teamMemberships, teams, users } from "../db/schema";
import { ApiError } from "../http/errors";
import { assertRoom, CAPS } from "../http/caps";
import { requireAthleteActor } from "../athletes/reach";
import type { InviteAthleteInput, RosterEntry } from "./console-schemas";
import { rosterEntry } from "./roster-entry";
import { coachesNow } from "./coaching";

/**
 * The team's name, if `userId` is an active coach or admin of it; 403 otherwise, also for
 * unknown teams. `doing` names what only they may do ("invite to it").
 */
export async function coachedTeamName(db: Db, userId: string, teamId: string, doing = "invite to it", { lock = true } = {}): Promise<string> {
  const read = db
    .select({ name: teams.name })
    .from(teamMemberships)
    .innerJoin(teams, eq(teams.id, teamMemberships.teamId))
    .where(
      and(
        eq(teamMemberships.teamId, teamId),
        eq(teamMemberships.userId, userId),
        coachesNow(),
      ),
    );
  // Shared (unless the caller holds the team's row already): a delete of the team waits for the
  // write that read it here, or this waits for the delete and finds the team gone
  // (end-membership.ts, deleteTeam).
  const [row] = lock ? await read.for("share", { of: teams }) : await read;
  if (!row) throw new ApiError("team_not_reachable", `Only a coach or admin of team ${teamId} may ${doing}.`);
  return row.name;
}

/** Unanswered invitations one person may hold from one inviter, across the inviter's teams. */
export const MAX_PENDING_FROM_ONE_INVITER = 3;

/**
 * Invites an existing account to a team as an athlete. The invitation grants nothing until
 * the athlete accepts it: reach counts only active memberships, and the answer (like the
 * roster) shows the coach only the email they typed and the status, not who the account is.
 */
export async function inviteAthlete({
  ctx,
  teamId,
  input,
}: {
  ctx: WriteCtx;
  teamId: string;
  input: z.output<typeof InviteAthleteInput>;
}): Promise<RosterEntry> {
  requireAthleteActor(ctx.actor);
  const inviterId = ctx.actor.userId;
  const teamName = await coachedTeamName(ctx.db, inviterId, teamId);
  const [person] = await ctx.db
    .select({ id: users.id })
    .from(users)
    .where(eq(users.email, input.email));
  if (!person) {
    const detail = `No account uses ${input.email}. Ask them to sign up first, then invite them again.`;
    throw new ApiError("not_found", detail, { errors: [{ field: "email", code: "not_found", detail }] });
  }
  // One person's invitations from one inviter are bounded, so that nobody can fill another's
  // Invitations page by making teams: past the bound, the person answers or the inviter
  // withdraws first. (A race past it by one or two is harmless; the bound is about floods.)
  const [pending] = await ctx.db
    .select({ n: sql<number>`count(*)::int` })
    .from(teamMemberships)
    .where(and(eq(teamMemberships.userId, person.id), eq(teamMemberships.invitedBy, inviterId), eq(teamMemberships.status, "invited")));
  if (pending!.n >= MAX_PENDING_FROM_ONE_INVITER) {
    const detail = `${input.email} has ${pending!.n} invitations from you still unanswered; wait for their answer or withdraw one first.`;
    throw new ApiError("conflict", detail, { errors: [{ field: "email", code: "conflict", detail }] });
  }
  // A team's unanswered invitations are bounded too (its roster is read whole): past the cap,
  // the coach withdraws some first.
  const cap = CAPS.pendingInvitationsPerTeam;
  await assertRoom(ctx.db, {
    table: teamMemberships,
    owner: `invitations:${teamId}`,
    where: and(eq(teamMemberships.teamId, teamId), eq(teamMemberships.status, "invited")),
    cap,
    detail: `${teamName} has ${cap} invitations nobody has answered yet, the most a team may: withdraw some first.`,
  });
  // The primary key settles two coaches inviting the same person at once: one row wins.
  const [row] = await ctx.db
    .insert(teamMemberships)
    .values({ teamId, userId: person.id, role: "athlete", status: "invited", invitedBy: inviterId })
    .onConflictDoNothing()
    .returning();
  if (!row) {
    const [existing] = await ctx.db
      .select({ status: teamMemberships.status })
      .from(teamMemberships)
      .where(and(eq(teamMemberships.teamId, teamId), eq(teamMemberships.userId, person.id)));
    const who = person.id === inviterId ? "You are" : `${input.email} is`;
    const detail =
      existing?.status === "invited"
        ? `${input.email} is already invited to ${teamName} and has not answered yet.`
        : `${who} already a member of ${teamName}.`;
    throw new ApiError("conflict", detail, { errors: [{ field: "email", code: "conflict", detail }] });
  }
  return rosterEntry(row, { name: null, email: input.email });
}
