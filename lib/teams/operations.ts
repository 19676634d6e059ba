import { z } from "zod";
import { defineOperation } from "../http/operation";
import { TeamIdParam } from "../http/schemas";
import { PageQuery, TeamList, TeamMemberList } from "./schemas";

export const listTeamsOp = defineOperation({
  method: "GET",
  path: "/v1/teams",
  operationId: "listTeams",
  summary: "List the teams you coach or administer",
  description: "The teams from which athlete ids may be discovered.",
  tag: "Teams",
  auth: "athlete",
  scope: "teams.read",
  query: PageQuery,
  response: { status: 200, description: "A page of teams.", schema: TeamList },
  errors: ["invalid_request", "invalid_cursor"],
});

export const listTeamMembersOp = defineOperation({
  method: "GET",
  path: "/v1/teams/{team_id}/members",
  operationId: "listTeamMembers",
  summary: "List a team's members",
  description: "Active members of a team the token's owner coaches or administers; their ids may be passed as `athlete_id`.",
  tag: "Teams",
  auth: "athlete",
  scope: "teams.read",
  params: z.object({ team_id: TeamIdParam }),
  query: PageQuery,
  response: { status: 200, description: "A page of members.", schema: TeamMemberList },
  errors: ["invalid_request", "invalid_cursor", "team_not_reachable"],
});
