// POST /api/console/invitations/{team_id}: accept the invitation to a team; DELETE: decline it (answers null).
import { consoleHandler, consoleRoute, pathParams, type ConsoleOperation } from "@/lib/http/console-route";
import { Membership } from "@/lib/teams/console-schemas";
import { respondToInvitation } from "@/lib/teams/respond-to-invitation";

const params = pathParams("team_id");
const response = { status: 200, schema: Membership.nullable() } satisfies ConsoleOperation["response"];

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  POST: consoleHandler({ method: "POST", params, response }, ({ ctx, params }) => respondToInvitation({ ctx, teamId: params.team_id, answer: "accept" })),
  DELETE: consoleHandler({ method: "DELETE", params, response }, ({ ctx, params }) =>
    respondToInvitation({ ctx, teamId: params.team_id, answer: "decline" }),
  ),
});
