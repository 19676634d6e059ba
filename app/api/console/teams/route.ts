// GET /api/console/teams: the teams the person coaches, with rosters and invitations; POST: create one.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { CreateTeamInput } from "@/lib/teams/console-schemas";
import { createTeam } from "@/lib/teams/create-team";
import { listCoachedTeams } from "@/lib/teams/list-coached-teams";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx }) => listCoachedTeams({ ctx })),
  POST: consoleHandler({ body: CreateTeamInput, status: 201 }, ({ ctx, body }) => createTeam({ ctx, input: body })),
});
