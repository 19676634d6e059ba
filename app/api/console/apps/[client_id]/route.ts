// GET /api/console/apps/{client_id}: one of the person's apps; PATCH: change it; DELETE: delete it and every grant to it.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { DeletedApp, DeveloperApp, UpdateAppInput } from "@/lib/oauth-clients/schemas";
import { deleteApp } from "@/lib/oauth-clients/delete-app";
import { getMyApp } from "@/lib/oauth-clients/get-my-app";
import { updateApp } from "@/lib/oauth-clients/update-app";

const params = pathParams("client_id");

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", params, response: { status: 200, schema: DeveloperApp } }, ({ ctx, params }) =>
    getMyApp({ ctx, clientId: params.client_id }),
  ),
  PATCH: consoleHandler({ method: "PATCH", params, body: UpdateAppInput, response: { status: 200, schema: DeveloperApp } }, ({ ctx, params, body }) =>
    updateApp({ ctx, clientId: params.client_id, input: body }),
  ),
  DELETE: consoleHandler({ method: "DELETE", params, response: { status: 200, schema: DeletedApp } }, ({ ctx, params }) =>
    deleteApp({ ctx, clientId: params.client_id }),
  ),
});
