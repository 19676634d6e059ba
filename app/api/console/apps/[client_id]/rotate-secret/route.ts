// POST /api/console/apps/{client_id}/rotate-secret: a new client secret (shown once); the old one stops at once.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { rotateClientSecret } from "@/lib/oauth-clients/rotate-client-secret";
import { AppWithSecret } from "@/lib/oauth-clients/schemas";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  POST: consoleHandler(
    { method: "POST", params: pathParams("client_id"), response: { status: 200, schema: AppWithSecret } },
    ({ ctx, params }) => rotateClientSecret({ ctx, clientId: params.client_id }),
  ),
});
