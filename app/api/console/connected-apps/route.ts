// GET /api/console/connected-apps: the apps the person has authorized.
import { z } from "zod";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { listConnectedApps } from "@/lib/oauth-grants/list-connected-apps";
import { ConnectedApp } from "@/lib/oauth-grants/schemas";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", response: { status: 200, schema: z.array(ConnectedApp) } }, ({ ctx }) => listConnectedApps({ ctx })),
});
