// GET /api/console/profile: the signed-in athlete's profile; PATCH: change name, timezone, units.
import { getAthleteProfile } from "@/lib/athletes/get-athlete-profile";
import { Athlete } from "@/lib/athletes/schemas";
import { UpdateProfileInput, updateProfile } from "@/lib/athletes/update-profile";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", response: { status: 200, schema: Athlete } }, ({ ctx }) => getAthleteProfile({ ctx, athleteId: "me" })),
  PATCH: consoleHandler({ method: "PATCH", body: UpdateProfileInput, response: { status: 200, schema: Athlete } }, ({ ctx, body }) => updateProfile({ ctx, input: body })),
});
