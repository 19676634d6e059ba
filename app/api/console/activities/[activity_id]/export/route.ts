// GET /api/console/activities/{activity_id}/export: "Download" on the activity page.
import { z } from "zod";
import { exportActivity } from "@/lib/activities/export-activity";
import { ExportQuery } from "@/lib/activities/file-schemas";
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler(
    // The answer is a file (FileBody), never JSON: no JSON schema admits anything.
    { method: "GET", params: pathParams("activity_id"), query: ExportQuery, response: { status: 200, schema: z.never() } },
    ({ ctx, params, query }) => exportActivity({ ctx, activityId: params.activity_id, format: query.format }),
  ),
});
