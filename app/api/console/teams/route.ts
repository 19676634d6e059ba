// GET /api/console/teams: the teams the person coaches, with rosters and invitations; POST: create one.
import { z } from "zod";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { CoachedTeam, CreateTeamInput } from "@/lib/teams/console-schemas";
import { createTeam } from "@/lib/teams/create-team";
import { listCoachedTeams } from "@/lib/teams/list-coached-teams";
import { Team } from "@/lib/teams/schemas";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", response: { status: 200, schema: z.array(CoachedTeam) } }, ({ ctx }) => listCoachedTeams({ ctx })),
  POST: consoleHandler({ method: "POST", idempotent: true, body: CreateTeamInput, response: { status: 201, schema: Team } }, ({ ctx, body }) =>
    createTeam({ ctx, input: body }),
  ),
});
