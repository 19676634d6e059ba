// GET /api/console/apps/{client_id}/usage: what GET /v1/app/usage answers, for the app's owner.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { getAppUsage } from "@/lib/usage/get-app-usage";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx, params }) => getAppUsage({ ctx, clientId: params.client_id! })),
});
