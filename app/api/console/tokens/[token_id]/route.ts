// DELETE /api/console/tokens/{token_id}: revoke a PAT.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { revokePersonalAccessToken } from "@/lib/tokens/personal-access-tokens";
import { PatSummary } from "@/lib/tokens/schemas";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  DELETE: consoleHandler({ method: "DELETE", params: pathParams("token_id"), response: { status: 200, schema: PatSummary } }, ({ ctx, params }) =>
    revokePersonalAccessToken({ ctx, tokenId: params.token_id }),
  ),
});
