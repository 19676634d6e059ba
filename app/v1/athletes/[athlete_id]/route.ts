// GET /v1/athletes/{athlete_id}: an athlete's profile (`me` or a reachable athlete).
import { handle, route } from "@/lib/http/api-route";
import { getAthleteOp } from "@/lib/athletes/operations";
import { getAthleteProfile } from "@/lib/athletes/get-athlete-profile";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(getAthleteOp, ({ ctx, params }) => getAthleteProfile({ ctx, athleteId: params.athlete_id })),
});
