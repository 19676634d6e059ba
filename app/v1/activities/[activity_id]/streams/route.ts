// GET /v1/activities/{activity_id}/streams: the activity's samples, channel by channel.
import { handle, route } from "@/lib/http/api-route";
import { getActivityStreamsOp } from "@/lib/activities/operations";
import { getStreams } from "@/lib/activities/get-streams";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(getActivityStreamsOp, ({ ctx, params, query }) => getStreams({ ctx, activityId: params.activity_id, query })),
});
