// GET /v1/activities/{activity_id}/export: the activity as a file, the original or one generated.
import { handle, route } from "@/lib/http/api-route";
import { exportActivityOp } from "@/lib/activities/operations";
import { exportActivity } from "@/lib/activities/export-activity";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(exportActivityOp, ({ ctx, params, query }) => exportActivity({ ctx, activityId: params.activity_id, format: query.format })),
});
