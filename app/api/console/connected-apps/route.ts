// GET /api/console/connected-apps: the apps the person has authorized.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { listConnectedApps } from "@/lib/oauth-grants/list-connected-apps";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx }) => listConnectedApps({ ctx })),
});
