// GET /api/console/activities/{activity_id}: one activity; PATCH: change the athlete's own.
import { getActivity } from "@/lib/activities/get-activity";
import { Activity, UpdateActivityInput } from "@/lib/activities/schemas";
import { updateActivity } from "@/lib/activities/update-activity";
import { route } from "@/lib/http/api-route";
import { consoleHandler, pathParams } from "@/lib/http/console-route";

const params = pathParams("activity_id");

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({ method: "GET", params, response: { status: 200, schema: Activity } }, ({ ctx, params }) =>
    getActivity({ ctx, activityId: params.activity_id }),
  ),
  PATCH: consoleHandler({ method: "PATCH", params, body: UpdateActivityInput, response: { status: 200, schema: Activity } }, ({ ctx, params, body }) =>
    updateActivity({ ctx, activityId: params.activity_id, input: body }),
  ),
});
