// GET /api/console/tokens: the person's PATs; POST: create one (shown once).
import { z } from "zod";
import { consoleHandler, consoleRoute } from "@/lib/http/console-route";
import { CreatedPat, CreatePatInput, PatSummary } from "@/lib/tokens/schemas";
import { createPersonalAccessToken, listPersonalAccessTokens, reissuePersonalAccessToken } from "@/lib/tokens/personal-access-tokens";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", response: { status: 200, schema: z.array(PatSummary) } }, ({ ctx }) => listPersonalAccessTokens({ ctx })),
  POST: consoleHandler(
    {
      method: "POST",
      idempotent: true,
      body: CreatePatInput,
      response: { status: 201, schema: CreatedPat },
      // Kept only as a hash: a replay gets the token issued again, never the first one read back.
      oneTimeSecret: {
        strip: (answer) => ({ ...answer, token: "" }),
        reissue: (ctx, stored) => reissuePersonalAccessToken({ ctx, tokenId: stored.summary.id }),
      },
    },
    ({ ctx, body }) => createPersonalAccessToken({ ctx, input: body }),
  ),
});
