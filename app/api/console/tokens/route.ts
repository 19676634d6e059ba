// GET /api/console/tokens: the person's PATs; POST: create one (shown once).
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { CreatePatInput } from "@/lib/tokens/schemas";
import { createPersonalAccessToken, listPersonalAccessTokens } from "@/lib/tokens/personal-access-tokens";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx }) => listPersonalAccessTokens({ ctx })),
  POST: consoleHandler({ body: CreatePatInput, status: 201 }, ({ ctx, body }) => createPersonalAccessToken({ ctx, input: body })),
});
