// POST /api/console/teams/{team_id}/invitations: invite an account to the team by email.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { InviteAthleteInput } from "@/lib/teams/console-schemas";
import { inviteAthlete } from "@/lib/teams/invite-athlete";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  POST: consoleHandler({ body: InviteAthleteInput, status: 201 }, ({ ctx, params, body }) =>
    inviteAthlete({ ctx, teamId: params.team_id!, input: body }),
  ),
});
