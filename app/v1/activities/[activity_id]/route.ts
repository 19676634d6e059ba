// GET /v1/activities/{activity_id}: one activity; PATCH: change it; DELETE: delete it, with its streams, laps and file.
import { handle, route } from "@/lib/http/api-route";
import { deleteActivityOp, getActivityOp, updateActivityOp } from "@/lib/activities/operations";
import { deleteActivity } from "@/lib/activities/delete-activity";
import { getActivity } from "@/lib/activities/get-activity";
import { updateActivity } from "@/lib/activities/update-activity";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(getActivityOp, ({ ctx, params }) => getActivity({ ctx, activityId: params.activity_id })),
  PATCH: handle(updateActivityOp, ({ ctx, params, body }) =>
    updateActivity({ ctx, activityId: params.activity_id, input: body }),
  ),
  DELETE: handle(deleteActivityOp, ({ ctx, params }) => deleteActivity({ ctx, activityId: params.activity_id })),
});
