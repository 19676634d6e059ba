// GET /v1/activities/{activity_id}: one activity; PATCH: change it.
import { handle, route } from "@/lib/http/api-route";
import { getActivityOp, updateActivityOp } from "@/lib/activities/operations";
import { getActivity } from "@/lib/activities/get-activity";
import { updateActivity } from "@/lib/activities/update-activity";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: handle(getActivityOp, ({ ctx, params }) => getActivity({ ctx, activityId: params.activity_id })),
  PATCH: handle(updateActivityOp, ({ ctx, params, body }) =>
    updateActivity({ ctx, activityId: params.activity_id, input: body }),
  ),
});
