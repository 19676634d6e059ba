// POST /api/console/apps/{client_id}/rotate-secret: a new client secret (shown once); the old one stops at once.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { rotateClientSecret } from "@/lib/oauth-clients/rotate-client-secret";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  POST: consoleHandler({}, ({ ctx, params }) => rotateClientSecret({ ctx, clientId: params.client_id! })),
});
