import { z } from "zod";
import { defineOperation } from "../http/operation";
import { AthleteIdParam } from "../http/schemas";
import { Athlete } from "./schemas";

export const getAthleteOp = defineOperation({
  method: "GET",
  path: "/v1/athletes/{athlete_id}",
  operationId: "getAthlete",
  summary: "Get an athlete's profile",
  description:
    "`me` is the token's own athlete. Any other id must be an active member of a team the token's owner coaches or administers; otherwise 403 `athlete_not_reachable` (also for ids that do not exist, so ids cannot be probed).",
  tag: "Athletes",
  auth: "athlete",
  scope: "athlete.read",
  params: z.object({ athlete_id: AthleteIdParam }),
  response: { status: 200, description: "The athlete's profile.", schema: Athlete },
  errors: ["invalid_request", "athlete_not_reachable", "not_found"],
});
