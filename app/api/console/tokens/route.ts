// GET /api/console/tokens: the person's PATs; POST: create one (shown once).
import { z } from "zod";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { CreatedPat, CreatePatInput, PatSummary } from "@/lib/tokens/schemas";
import { createdPatReplay, createPersonalAccessToken, listPersonalAccessTokens } from "@/lib/tokens/personal-access-tokens";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", response: { status: 200, schema: z.array(PatSummary) } }, ({ ctx }) => listPersonalAccessTokens({ ctx })),
  POST: consoleHandler(
    {
      method: "POST",
      idempotent: true,
      body: CreatePatInput,
      response: { status: 201, schema: CreatedPat },
      oneTimeSecret: createdPatReplay,
    },
    ({ ctx, body }) => createPersonalAccessToken({ ctx, input: body }),
  ),
});
