// GET /api/console/apps: the apps the person owns; POST: register one (its secret shown once).
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { RegisterAppInput } from "@/lib/oauth-clients/schemas";
import { listMyApps } from "@/lib/oauth-clients/list-my-apps";
import { registerApp } from "@/lib/oauth-clients/register-app";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx }) => listMyApps({ ctx })),
  POST: consoleHandler({ body: RegisterAppInput, status: 201 }, ({ ctx, body }) => registerApp({ ctx, input: body })),
});
