// GET /api/console/activities/{activity_id}/laps: the laps, for the activity page.
import { getLaps } from "@/lib/activities/get-laps";
import { LapList } from "@/lib/activities/file-schemas";
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", params: pathParams("activity_id"), response: { status: 200, schema: LapList } }, ({ ctx, params }) =>
    getLaps({ ctx, activityId: params.activity_id }),
  ),
});
