// The reference authorization server of the oauth-token scenario: panva's oidc-provider (an
// OpenID-certified Node.js implementation) on plain Node, one confidential client, the
// client_credentials grant issuing ES256 JWT access tokens (RFC 9068) for one resource, as
// the service does. Its default in-memory adapter; nothing is stored for a JWT access token.
//
// node bench/oidc-provider/server.mjs, with PORT, CLIENT_ID, CLIENT_SECRET in the environment.
import { createServer } from "node:http";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

const port = Number(process.env.PORT ?? 4010);
const issuer = `http://127.0.0.1:${port}`;
const resource = `${issuer}/v1`;
const { privateKey } = await generateKeyPair("ES256", { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: "oidc-provider-bench", alg: "ES256", use: "sig" };

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.CLIENT_ID ?? "bench-app",
      client_secret: process.env.CLIENT_SECRET ?? "bench-secret",
      token_endpoint_auth_method: "client_secret_basic",
      // The only key is ES256; the default (RS256) would have no key to sign ID tokens with.
      id_token_signed_response_alg: "ES256",
      grant_types: ["client_credentials"],
      response_types: [],
      redirect_uris: [],
    },
  ],
  jwks: { keys: [jwk] },
  cookies: { keys: ["oidc-provider-bench-cookie-key"] },
  features: {
    clientCredentials: { enabled: true },
    introspection: { enabled: false },
    revocation: { enabled: false },
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: "",
        audience: resource,
        accessTokenTTL: 3600,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: "ES256" } },
      }),
    },
  },
});

createServer(provider.callback()).listen(port, "127.0.0.1", () => {
  console.log(`oidc-provider listening on ${issuer}`);
});
