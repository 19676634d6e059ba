import { SCOPE_NAMES } from "../auth/scopes";
import type { Env } from "../env";

/** @see RFC 8414 §2 */
export function authorizationServerMetadata(env: Env) {
  const b = env.baseUrl;
  return {
    issuer: b,
    authorization_endpoint: `${b}/oauth/authorize`,
    token_endpoint: `${b}/oauth/token`,
    revocation_endpoint: `${b}/oauth/revoke`,
    jwks_uri: `${b}/oauth/jwks`,
    scopes_supported: SCOPE_NAMES,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "none"],
    revocation_endpoint_auth_methods_supported: ["client_secret_basic", "none"],
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${b}/docs`,
  };
}

/** @see RFC 9728 §2 */
export function protectedResourceMetadata(env: Env) {
  return {
    resource: env.apiBaseUrl,
    authorization_servers: [env.baseUrl],
    scopes_supported: SCOPE_NAMES,
    bearer_methods_supported: ["header"],
    resource_documentation: `${env.baseUrl}/docs`,
    resource_name: "Athlete Activity Service API",
  };
}
