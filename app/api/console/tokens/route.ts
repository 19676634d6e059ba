// GET /api/console/tokens: the person's PATs; POST: create one (shown once).
import { z } from "zod";
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { CreatePatInput, type PatSummary } from "@/lib/tokens/schemas";
import { createPersonalAccessToken, listPersonalAccessTokens } from "@/lib/tokens/personal-access-tokens";

// lib/tokens declares this shape in TypeScript only; this schema is held to that type until it moves there.
const PatSummaryWire = z.object({
  id: z.string(),
  name: z.string(),
  display: z.string(),
  scopes: z.array(z.string()),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
}) satisfies z.ZodType<PatSummary>;

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({ method: "GET", response: { status: 200, schema: z.array(PatSummaryWire) } }, ({ ctx }) => listPersonalAccessTokens({ ctx })),
  POST: consoleHandler(
    { method: "POST", body: CreatePatInput, response: { status: 201, schema: z.object({ token: z.string(), summary: PatSummaryWire }) } },
    ({ ctx, body }) => createPersonalAccessToken({ ctx, input: body }),
  ),
});
