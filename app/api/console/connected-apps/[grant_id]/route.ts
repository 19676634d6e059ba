// DELETE /api/console/connected-apps/{grant_id}: disconnect the app; its tokens stop at once.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { disconnectApp } from "@/lib/oauth-grants/disconnect-app";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  DELETE: consoleHandler({}, ({ ctx, params }) => disconnectApp({ ctx, grantId: params.grant_id! })),
});
