// GET /api/console/activities/{activity_id}: one activity; PATCH: change the athlete's own; DELETE: delete it.
import { getActivity } from "@/lib/activities/get-activity";
import { Activity, UpdateActivityInput } from "@/lib/activities/schemas";
import { updateActivity } from "@/lib/activities/update-activity";
import { deleteActivity } from "@/lib/activities/delete-activity";
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { z } from "zod";

const params = pathParams("activity_id");

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", params, response: { status: 200, schema: Activity } }, ({ ctx, params }) =>
    getActivity({ ctx, activityId: params.activity_id }),
  ),
  PATCH: consoleHandler({ method: "PATCH", params, body: UpdateActivityInput, response: { status: 200, schema: Activity } }, ({ ctx, params, body }) =>
    updateActivity({ ctx, activityId: params.activity_id, input: body }),
  ),
  DELETE: consoleHandler({ method: "DELETE", idempotent: true, params, response: { status: 200, schema: z.null() } }, ({ ctx, params }) =>
    deleteActivity({ ctx, activityId: params.activity_id }),
  ),
});
