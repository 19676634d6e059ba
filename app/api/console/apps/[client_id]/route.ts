// GET /api/console/apps/{client_id}: one of the person's apps; PATCH: change it; DELETE: delete it and every grant to it.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { UpdateAppInput } from "@/lib/oauth-clients/schemas";
import { deleteApp } from "@/lib/oauth-clients/delete-app";
import { getMyApp } from "@/lib/oauth-clients/get-my-app";
import { updateApp } from "@/lib/oauth-clients/update-app";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx, params }) => getMyApp({ ctx, clientId: params.client_id! })),
  PATCH: consoleHandler({ body: UpdateAppInput }, ({ ctx, params, body }) => updateApp({ ctx, clientId: params.client_id!, input: body })),
  DELETE: consoleHandler({}, ({ ctx, params }) => deleteApp({ ctx, clientId: params.client_id! })),
});
