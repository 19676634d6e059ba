// DELETE /api/console/tokens/{token_id}: revoke a PAT.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { revokePersonalAccessToken } from "@/lib/tokens/personal-access-tokens";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  DELETE: consoleHandler({}, ({ ctx, params }) => revokePersonalAccessToken({ ctx, tokenId: params.token_id! })),
});
