// POST /api/console/invitations/{team_id}: accept the invitation to a team; DELETE: decline it.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { respondToInvitation } from "@/lib/teams/respond-to-invitation";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  POST: consoleHandler({}, ({ ctx, params }) => respondToInvitation({ ctx, teamId: params.team_id!, answer: "accept" })),
  DELETE: consoleHandler({}, ({ ctx, params }) => respondToInvitation({ ctx, teamId: params.team_id!, answer: "decline" })),
});
