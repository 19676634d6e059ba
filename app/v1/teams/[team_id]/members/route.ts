// GET /v1/teams/{team_id}/members: the athletes whose ids may be passed as athlete_id.
import { handle, route } from "@/lib/http/api-route";
import { listTeamMembersOp } from "@/lib/teams/operations";
import { listTeamMembers } from "@/lib/teams/api";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(listTeamMembersOp, ({ ctx, params, query }) => listTeamMembers({ ctx, teamId: params.team_id, query })),
});
