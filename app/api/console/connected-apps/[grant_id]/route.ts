// DELETE /api/console/connected-apps/{grant_id}: disconnect the app; its tokens stop at once.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { disconnectApp } from "@/lib/oauth-grants/disconnect-app";
import { DisconnectedApp } from "@/lib/oauth-grants/schemas";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  DELETE: consoleHandler({ method: "DELETE", params: pathParams("grant_id"), response: { status: 200, schema: DisconnectedApp } }, ({ ctx, params }) =>
    disconnectApp({ ctx, grantId: params.grant_id }),
  ),
});
