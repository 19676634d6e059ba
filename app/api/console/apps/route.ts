// GET /api/console/apps: the apps the person owns; POST: register one (its secret shown once).
import { z } from "zod";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { AppWithSecret, DeveloperApp, RegisterAppBody } from "@/lib/oauth-clients/schemas";
import { listMyApps } from "@/lib/oauth-clients/list-my-apps";
import { registerApp } from "@/lib/oauth-clients/register-app";
import { registeredAppReplay } from "@/lib/oauth-clients/rotate-client-secret";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", response: { status: 200, schema: z.array(DeveloperApp) } }, ({ ctx }) => listMyApps({ ctx })),
  POST: consoleHandler(
    {
      method: "POST",
      idempotent: true,
      body: RegisterAppBody,
      response: { status: 201, schema: AppWithSecret },
      oneTimeSecret: registeredAppReplay,
    },
    ({ ctx, body }) => registerApp({ ctx, input: body }),
  ),
});
