// GET /api/console/apps/{client_id}/usage: what GET /v1/app/usage answers, for the app's owner.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { getAppUsage } from "@/lib/usage/get-app-usage";
import { AppUsage } from "@/lib/usage/schemas";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", params: pathParams("client_id"), response: { status: 200, schema: AppUsage } }, ({ ctx, params }) =>
    getAppUsage({ ctx, clientId: params.client_id }),
  ),
});
