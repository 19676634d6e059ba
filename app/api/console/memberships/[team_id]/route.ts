// DELETE /api/console/memberships/{team_id}: leave a team (answers null).
import { z } from "zod";
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { leaveTeam } from "@/lib/teams/end-membership";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  DELETE: consoleHandler({ method: "DELETE", params: pathParams("team_id"), response: { status: 200, schema: z.null() } }, ({ ctx, params }) =>
    leaveTeam({ ctx, teamId: params.team_id }),
  ),
});
