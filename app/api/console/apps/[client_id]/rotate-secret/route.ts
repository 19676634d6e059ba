// POST /api/console/apps/{client_id}/rotate-secret: a new client secret (shown once); the old one stops at once.
import { route } from "@/lib/http/api-route";
import { consoleHandler, pathParams } from "@/lib/http/console-route";
import { rotateClientSecret } from "@/lib/oauth-clients/rotate-client-secret";
import { AppWithSecret } from "@/lib/oauth-clients/schemas";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  POST: consoleHandler(
    { method: "POST", params: pathParams("client_id"), response: { status: 200, schema: AppWithSecret } },
    ({ ctx, params }) => rotateClientSecret({ ctx, clientId: params.client_id }),
  ),
});
