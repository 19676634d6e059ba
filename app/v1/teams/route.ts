// GET /v1/teams: the teams the token's owner coaches or administers.
import { handle, route } from "@/lib/http/api-route";
import { listTeamsOp } from "@/lib/teams/operations";
import { listTeams } from "@/lib/teams/api";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(listTeamsOp, ({ ctx, query }) => listTeams({ ctx, query })),
});
