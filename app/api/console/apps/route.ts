// GET /api/console/apps: the apps the person owns; POST: register one (its secret shown once).
import { z } from "zod";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { AppWithSecret, DeveloperApp, RegisterAppBody } from "@/lib/oauth-clients/schemas";
import { listMyApps } from "@/lib/oauth-clients/list-my-apps";
import { registerApp } from "@/lib/oauth-clients/register-app";
import { reissueRegisteredSecret } from "@/lib/oauth-clients/rotate-client-secret";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", response: { status: 200, schema: z.array(DeveloperApp) } }, ({ ctx }) => listMyApps({ ctx })),
  POST: consoleHandler(
    {
      method: "POST",
      idempotent: true,
      body: RegisterAppBody,
      response: { status: 201, schema: AppWithSecret },
      // Kept only as a hash: a replay gets the secret issued again, never the first one read back.
      oneTimeSecret: {
        strip: (answer) => ({ ...answer, client_secret: null }),
        reissue: (ctx, stored) => reissueRegisteredSecret({ ctx, registered: stored }),
      },
    },
    ({ ctx, body }) => registerApp({ ctx, input: body }),
  ),
});
