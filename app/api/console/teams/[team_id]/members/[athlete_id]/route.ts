// DELETE /api/console/teams/{team_id}/members/{athlete_id}: take an athlete off the team (answers null).
import { z } from "zod";
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { removeFromTeam } from "@/lib/teams/end-membership";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  DELETE: consoleHandler(
    { method: "DELETE", params: pathParams("team_id", "athlete_id"), response: { status: 200, schema: z.null() } },
    ({ ctx, params }) => removeFromTeam({ ctx, teamId: params.team_id, member: { athleteId: params.athlete_id } }),
  ),
});
