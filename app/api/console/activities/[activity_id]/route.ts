// GET /api/console/activities/{activity_id}: one activity; PATCH: change the athlete's own.
import { getActivity } from "@/lib/activities/get-activity";
import { UpdateActivityInput } from "@/lib/activities/schemas";
import { updateActivity } from "@/lib/activities/update-activity";
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx, params }) => getActivity({ ctx, activityId: params.activity_id! })),
  PATCH: consoleHandler({ body: UpdateActivityInput }, ({ ctx, params, body }) =>
    updateActivity({ ctx, activityId: params.activity_id!, input: body }),
  ),
});
