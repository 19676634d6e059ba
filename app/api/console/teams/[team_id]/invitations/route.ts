// POST /api/console/teams/{team_id}/invitations: invite an account to the team by email.
import { z } from "zod";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { TeamIdParam } from "@/lib/http/schemas";
import { InviteAthleteInput, RosterEntry } from "@/lib/teams/console-schemas";
import { inviteAthlete } from "@/lib/teams/invite-athlete";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  POST: consoleHandler(
    { method: "POST", idempotent: true, params: z.strictObject({ team_id: TeamIdParam }), body: InviteAthleteInput, response: { status: 201, schema: RosterEntry } },
    ({ ctx, params, body }) => inviteAthlete({ ctx, teamId: params.team_id, input: body }),
  ),
});
