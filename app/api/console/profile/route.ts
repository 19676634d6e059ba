// GET /api/console/profile: the signed-in athlete's profile; PATCH: change name, timezone, units.
import { getAthleteProfile } from "@/lib/athletes/get-athlete-profile";
import { UpdateProfileInput, updateProfile } from "@/lib/athletes/update-profile";
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx }) => getAthleteProfile({ ctx, athleteId: "me" })),
  PATCH: consoleHandler({ body: UpdateProfileInput }, ({ ctx, body }) => updateProfile({ ctx, input: body })),
});
