// DELETE /api/console/teams/{team_id}: a coach deletes their team, its memberships and invitations with it (answers null).
import { z } from "zod";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { TeamIdParam } from "@/lib/http/schemas";
import { deleteTeam } from "@/lib/teams/end-membership";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  DELETE: consoleHandler(
    { method: "DELETE", params: z.strictObject({ team_id: TeamIdParam }), response: { status: 200, schema: z.null() } },
    ({ ctx, params }) => deleteTeam({ ctx, teamId: params.team_id }),
  ),
});
