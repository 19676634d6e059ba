// DELETE /api/console/tokens/{token_id}: revoke a PAT.
import { z } from "zod";
import { route } from "@/lib/http/api-route";
import { consoleHandler, pathParams } from "@/lib/http/console-route";
import { revokePersonalAccessToken } from "@/lib/tokens/personal-access-tokens";
import type { PatSummary } from "@/lib/tokens/schemas";

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
  DELETE: consoleHandler({ method: "DELETE", params: pathParams("token_id"), response: { status: 200, schema: PatSummaryWire } }, ({ ctx, params }) =>
    revokePersonalAccessToken({ ctx, tokenId: params.token_id }),
  ),
});
