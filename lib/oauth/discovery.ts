import { SCOPE_NAMES, type Scope } from "../auth/scopes";
import type { TokenResource } from "../db/schema";
import type { Env } from "../env";
import { resourceUrl } from "./resources";

/** What the MCP server's tools can use (CONTRACT §12): the read scopes and `location.read`. */
export const MCP_SCOPES: Scope[] = SCOPE_NAMES.filter((s) => s.endsWith(".read"));

/** What an MCP client is told to ask for first (CONTRACT §12): the read scopes, without where the athlete trained. */
export const MCP_DEFAULT_SCOPES: Scope[] = MCP_SCOPES.filter((s) => s !== "location.read");

/** @see RFC 8414 §2 */
export function authorizationServerMetadata(env: Env) {
  const b = env.baseUrl;
  return {
    issuer: b,
    authorization_endpoint: `${b}/oauth/authorize`,
    token_endpoint: `${b}/oauth/token`,
    revocation_endpoint: `${b}/oauth/revoke`,
    registration_endpoint: `${b}/oauth/register`,
    jwks_uri: `${b}/oauth/jwks`,
    scopes_supported: SCOPE_NAMES,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "none"],
    revocation_endpoint_auth_methods_supported: ["client_secret_basic", "none"],
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    service_documentation: `${b}/docs`,
  };
}

/** @see RFC 9728 §2 */
export function protectedResourceMetadata(env: Env, resource: TokenResource = "v1") {
  return {
    resource: resourceUrl(env, resource),
    authorization_servers: [env.baseUrl],
    scopes_supported: resource === "mcp" ? MCP_SCOPES : SCOPE_NAMES,
    bearer_methods_supported: ["header"],
    resource_documentation: `${env.baseUrl}/docs`,
    resource_name: resource === "mcp" ? "Athlete Activity Service MCP server" : "Athlete Activity Service API",
  };
}
