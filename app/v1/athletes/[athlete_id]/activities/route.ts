// GET /v1/athletes/{athlete_id}/activities: list; POST /v1/athletes/me/activities: record one.
import { handle, route } from "@/lib/http/api-route";
import { createActivityOp, listActivitiesOp } from "@/lib/activities/operations";
import { listActivities } from "@/lib/activities/list-activities";
import { createActivity } from "@/lib/activities/create-activity";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(listActivitiesOp, ({ ctx, params, query }) => listActivities({ ctx, athleteId: params.athlete_id, query })),
  POST: handle(createActivityOp, ({ ctx, rawParams, body }) =>
    createActivity({ ctx, athleteId: String(rawParams.athlete_id), input: body }),
  ),
});
