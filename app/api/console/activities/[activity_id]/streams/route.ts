// GET /api/console/activities/{activity_id}/streams: the samples the activity page charts and maps.
import { getStreams } from "@/lib/activities/get-streams";
import { ActivityStreams, StreamsQuery } from "@/lib/activities/file-schemas";
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler(
    { method: "GET", params: pathParams("activity_id"), query: StreamsQuery, response: { status: 200, schema: ActivityStreams } },
    ({ ctx, params, query }) => getStreams({ ctx, activityId: params.activity_id, query }),
  ),
});
