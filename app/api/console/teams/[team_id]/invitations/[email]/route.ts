// DELETE /api/console/teams/{team_id}/invitations/{email}: withdraw an invitation not yet answered (answers null).
import { z } from "zod";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { TeamIdParam } from "@/lib/http/schemas";
import { removeFromTeam } from "@/lib/teams/end-membership";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  DELETE: consoleHandler(
    { method: "DELETE", params: z.strictObject({ team_id: TeamIdParam, email: z.string().min(1).max(254) }), response: { status: 200, schema: z.null() } },
    ({ ctx, params }) => removeFromTeam({ ctx, teamId: params.team_id, member: { email: params.email } }),
  ),
});
