// DELETE /api/console/teams/{team_id}/members/{athlete_id}: take an athlete off the team (answers null).
import { z } from "zod";
import { ConsoleIdParam, consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { TeamIdParam } from "@/lib/http/schemas";
import { removeFromTeam } from "@/lib/teams/end-membership";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  DELETE: consoleHandler(
    { method: "DELETE", params: z.strictObject({ team_id: TeamIdParam, athlete_id: ConsoleIdParam }), response: { status: 200, schema: z.null() } },
    ({ ctx, params }) => removeFromTeam({ ctx, teamId: params.team_id, member: { athleteId: params.athlete_id } }),
  ),
});
