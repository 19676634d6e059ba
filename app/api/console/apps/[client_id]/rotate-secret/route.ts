// POST /api/console/apps/{client_id}/rotate-secret: a new client secret (shown once); the old one stops at once.
import { z } from "zod";
import { route } from "@/lib/http/api-route";
import { consoleHandler, pathParams } from "@/lib/http/console-route";
import { rotateClientSecret } from "@/lib/oauth-clients/rotate-client-secret";
import { DeveloperApp, type AppWithSecret } from "@/lib/oauth-clients/schemas";

// lib/oauth-clients declares this answer in TypeScript only; this schema is held to that type until it moves there.
const AppWithSecretWire = z.object({ app: DeveloperApp, client_secret: z.string().nullable() }) satisfies z.ZodType<AppWithSecret>;

export const { GET, POST, PUT, PATCH, DELETE } = route({
  POST: consoleHandler(
    { method: "POST", params: pathParams("client_id"), response: { status: 200, schema: AppWithSecretWire } },
    ({ ctx, params }) => rotateClientSecret({ ctx, clientId: params.client_id }),
  ),
});
