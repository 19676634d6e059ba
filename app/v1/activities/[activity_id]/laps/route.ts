// GET /v1/activities/{activity_id}/laps: the laps of the activity's file.
import { handle, route } from "@/lib/http/api-route";
import { listActivityLapsOp } from "@/lib/activities/operations";
import { getLaps } from "@/lib/activities/get-laps";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(listActivityLapsOp, ({ ctx, params }) => getLaps({ ctx, activityId: params.activity_id })),
});
