import type { TokenResource } from "../db/schema";
import type { Env } from "../env";

// The two protected resources this server issues tokens for (RFC 8707, CONTRACT §6 and §12):
// the API at {base_url}/v1 and the MCP server at {base_url}/mcp. A token is bound to one of
// them (its `aud`), and each refuses the other's.

/** A resource's URL: what `resource` names, what `aud` holds, what RFC 9728 metadata describes. */
export function resourceUrl(env: Env, resource: TokenResource): string {
  return resource === "mcp" ? env.mcpUrl : env.apiBaseUrl;
}

/** The resource a URL names, exactly; undefined for anything else. */
export function resourceOf(env: Env, url: string): TokenResource | undefined {
  if (url === env.apiBaseUrl) return "v1";
  if (url === env.mcpUrl) return "mcp";
  return undefined;
}

/** Where a resource's RFC 9728 metadata is served: `/.well-known/oauth-protected-resource/{v1|mcp}`. */
export function resourceMetadataUrl(env: Env, resource: TokenResource): string {
  return `${env.baseUrl}/.well-known/oauth-protected-resource/${resource}`;
}
