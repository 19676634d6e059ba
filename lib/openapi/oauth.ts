import { z } from "zod";
import type { ZodOpenApiOperationObject, ZodOpenApiPathItemObject, ZodOpenApiResponseObject } from "zod-openapi";
import { SCOPE_NAMES } from "../auth/scopes";
import type { Env } from "../env";
import { TOKEN_PREFIXES } from "../tokens/format";
import type { OAuthErrorCode } from "../oauth/errors";
import { ACCESS_TOKEN_TTL_S } from "../oauth/access-token";
import { CODE_TTL_S } from "../oauth/authorize";
import { MAX_FORM_BYTES } from "../oauth/endpoint";
import { REFRESH_TOKEN_TTL_S, type TokenResponse } from "../oauth/token";
import { REGISTRATIONS_PER_HOUR, type RegisteredClient } from "../oauth/register";
import type { authorizationServerMetadata, protectedResourceMetadata } from "../oauth/discovery";
import type { ProblemCode } from "../http/errors";

// The authorization server's endpoints and the discovery documents, at the site root beside
// /v1 (the document's one server is the base URL, so `/oauth/token` resolves to
// {base_url}/oauth/token). lib/oauth shapes these answers with TypeScript types, not zod; the
// schemas here are held to those types below (a member added or removed there fails the
// typecheck) and to the real answers by lib/openapi/openapi.test.ts.

/**
 * The documented shape and the code's type have the same members, optional ones too (which
 * assignability alone does not compare): `Same<…>` is `true`.
 */
type Same<A, B> = [A, keyof A] extends [B, keyof B] ? ([B, keyof B] extends [A, keyof A] ? true : false) : false;

const text = (description: string, example?: string) => z.string().meta(example === undefined ? { description } : { description, example });

/** A form field Swagger UI leaves out until it is filled: its example is empty, not "string" (as the upload form's optional fields). */
const optionalField = (description: string) => z.string().optional().meta({ description, example: "" });

const days = (s: number) => s / 86_400;

/** RFC 6749 §5.1: exactly the members `tokenRequest` answers. */
export const TokenAnswer = z
  .object({
    access_token: text(`An RFC 9068 JWT (\`typ: at+jwt\`, ES256, verifiable with \`/oauth/jwks\`), its \`aud\` the resource it is for. Send it as \`Authorization: Bearer …\`.`),
    token_type: z.literal("Bearer"),
    expires_in: z.number().int().meta({ description: "Seconds the access token is valid.", example: ACCESS_TOKEN_TTL_S }),
    refresh_token: z
      .string()
      .optional()
      .meta({
        description: `With \`authorization_code\` and \`refresh_token\` only: \`${TOKEN_PREFIXES.refresh}…\`, valid ${days(REFRESH_TOKEN_TTL_S)} days and usable once (each refresh answers a new one; sending a used one again revokes the authorization).`,
      }),
    scope: z
      .string()
      .optional()
      .meta({ description: "With `authorization_code` and `refresh_token` only: the scopes granted, space-separated. A client-credentials token carries none.", example: "athlete.read activities.read" }),
  })
  .meta({ id: "OAuthTokenResponse" });
const _tokenAnswerIsTokenResponse: Same<z.output<typeof TokenAnswer>, TokenResponse> = true;

const resourceField = (env: Pick<Env, "apiBaseUrl" | "mcpUrl">) =>
  z
    .enum([env.apiBaseUrl, env.mcpUrl])
    .optional()
    .meta({
      description: `RFC 8707: the resource the token is for, \`${env.apiBaseUrl}\` (when left out) or \`${env.mcpUrl}\`. It must be the one the authorization named; a client-credentials token is for \`${env.apiBaseUrl}\` only. Anything else is \`invalid_target\`.`,
      example: "",
    });

/**
 * The token request of each grant, with what it requires. The form below is all of them in one
 * object (Swagger UI draws a form from `properties` alone, not from a `oneOf`), and each
 * grant's required fields are a `oneOf` branch of it.
 */
function tokenGrants(env: Pick<Env, "apiBaseUrl" | "mcpUrl">) {
  const clientId = optionalField("A public client's id (`none`: no secret, PKCE instead). A confidential client sends its id and secret with HTTP Basic instead; sent as well, it must be the same id.");
  return {
    authorization_code: z.object({
      code: text(`The code from the redirect; valid ${CODE_TTL_S} seconds, once.`),
      redirect_uri: text("Exactly the redirect_uri of the authorization request."),
      code_verifier: z
        .string()
        .regex(/^[A-Za-z0-9._~-]{43,128}$/)
        .meta({ description: "PKCE (RFC 7636): the verifier whose S256 challenge the authorization request sent; 43 to 128 unreserved characters." }),
      resource: resourceField(env),
      client_id: clientId,
    }),
    refresh_token: z.object({
      refresh_token: text(`The refresh token (\`${TOKEN_PREFIXES.refresh}…\`) of the last answer.`),
      scope: optionalField("Space-separated; only to narrow the scopes granted (`invalid_scope` otherwise). Left out: the scopes of the refresh token."),
      resource: resourceField(env),
      client_id: clientId,
    }),
    client_credentials: z.object({
      scope: optionalField("Must be left out: a client-credentials token acts as the app and carries no athlete scope (`invalid_scope`)."),
      resource: resourceField(env),
    }),
  };
}

function tokenForm(env: Pick<Env, "apiBaseUrl" | "mcpUrl">) {
  const grants = tokenGrants(env);
  const fields: Record<string, z.ZodType> = {};
  for (const shape of Object.values(grants).map((g) => g.shape as Record<string, z.ZodType>)) {
    for (const [name, field] of Object.entries(shape)) fields[name] ??= field.isOptional() ? field : field.optional().meta({ example: "" });
  }
  const grantTypes = Object.keys(grants) as [keyof typeof grants, ...(keyof typeof grants)[]];
  return z
    .object({ grant_type: z.enum(grantTypes).meta({ description: "`authorization_code`, `refresh_token` (RFC 6749 §6) or `client_credentials` (confidential clients only)." }), ...fields })
    .meta({
      id: "OAuthTokenRequest",
      description: "Each grant's fields: see `oneOf`. A parameter sent empty counts as left out; one sent twice is `invalid_request`. `client_secret` is refused here: send it with HTTP Basic.",
      oneOf: Object.entries(grants).map(([grant, schema]) => ({
        title: grant,
        properties: { grant_type: { const: grant } },
        required: Object.entries(schema.shape as Record<string, z.ZodType>)
          .filter(([, f]) => !f.isOptional())
          .map(([name]) => name),
      })),
    });
}

const RevocationForm = z
  .object({
    token: text("An access token or refresh token issued to this client."),
    token_type_hint: optionalField("`access_token` or `refresh_token`; not needed, the service tells them apart."),
    client_id: optionalField("A public client's id; a confidential client authenticates with HTTP Basic instead."),
  })
  .meta({ id: "OAuthRevocationRequest" });

/** RFC 7591 §2: the members the service reads; others are ignored. */
const RegistrationRequest = z
  .looseObject({
    redirect_uris: z
      .array(z.string())
      .min(1)
      .max(10)
      .meta({ description: "1 to 10 redirect URIs: `https://`, or `http://` on loopback (127.0.0.1, [::1], localhost), without a fragment or user name.", example: ["http://127.0.0.1:33418/callback"] }),
    client_name: z.string().min(1).max(100).optional().meta({ description: "Shown on the consent page; left out, `Assistant at {host of the first redirect URI}`.", example: "Desk Assistant" }),
    client_uri: z.url().optional().meta({ description: "An `https://` URL." }),
    logo_uri: z.url().optional().meta({ description: "An `https://` URL." }),
    token_endpoint_auth_method: z.literal("none").optional().meta({ description: "Only public clients register: `none`, or left out." }),
    grant_types: z.array(z.enum(["authorization_code", "refresh_token"])).optional(),
    response_types: z.array(z.literal("code")).optional(),
  })
  .meta({ id: "OAuthClientRegistrationRequest" });

/** RFC 7591 §3.2.1: every member registered, exactly as `registerClient` answers. */
const RegisteredClientAnswer = z
  .object({
    client_id: text("The new public client's id (`dcr_…`)."),
    client_id_issued_at: z.number().int().meta({ description: "Unix seconds." }),
    client_name: z.string(),
    redirect_uris: z.array(z.string()),
    token_endpoint_auth_method: z.literal("none"),
    grant_types: z.tuple([z.literal("authorization_code"), z.literal("refresh_token")]),
    response_types: z.tuple([z.literal("code")]),
    client_uri: z.string().optional(),
    logo_uri: z.string().optional(),
  })
  .meta({ id: "OAuthClientRegistrationResponse" });
const _registeredIsRegisteredClient: Same<z.output<typeof RegisteredClientAnswer>, RegisteredClient> = true;

const strings = z.array(z.string());

/** RFC 8414 §2, as `authorizationServerMetadata` writes it. */
const AuthorizationServerMetadata = z
  .object({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    revocation_endpoint: z.string(),
    registration_endpoint: z.string(),
    jwks_uri: z.string(),
    scopes_supported: z.array(z.enum(SCOPE_NAMES)),
    response_types_supported: strings,
    response_modes_supported: strings,
    grant_types_supported: strings,
    token_endpoint_auth_methods_supported: strings,
    revocation_endpoint_auth_methods_supported: strings,
    code_challenge_methods_supported: strings,
    authorization_response_iss_parameter_supported: z.boolean(),
    client_id_metadata_document_supported: z.boolean(),
    service_documentation: z.string(),
  })
  .meta({ id: "OAuthAuthorizationServerMetadata" });
const _asMetadataMembers: Same<keyof z.output<typeof AuthorizationServerMetadata>, keyof ReturnType<typeof authorizationServerMetadata>> = true;

/** RFC 9728 §2, as `protectedResourceMetadata` writes it. */
const ProtectedResourceMetadata = z
  .object({
    resource: z.string(),
    authorization_servers: strings,
    scopes_supported: z.array(z.enum(SCOPE_NAMES)),
    bearer_methods_supported: strings,
    resource_documentation: z.string(),
    resource_name: z.string(),
  })
  .meta({ id: "OAuthProtectedResourceMetadata" });
const _prMetadataMembers: Same<keyof z.output<typeof ProtectedResourceMetadata>, keyof ReturnType<typeof protectedResourceMetadata>> = true;

/** RFC 7517 §5: the public ES256 keys, the signing one and retired ones a live token may still name. */
const JsonWebKeySet = z
  .object({
    keys: z.array(
      z.object({
        kty: z.literal("EC"),
        crv: z.literal("P-256"),
        x: z.string(),
        y: z.string(),
        kid: text("The `kid` in an access token's header."),
        alg: z.literal("ES256"),
        use: z.literal("sig"),
      }),
    ),
  })
  .meta({ id: "JsonWebKeySet" });

/** RFC 6749 §5.2: the OAuth endpoints' errors, never a problem document (CONTRACT §3). */
function oauthErrorSchema(codes: OAuthErrorCode[]) {
  return z.object({
    error: z.enum(codes as [OAuthErrorCode, ...OAuthErrorCode[]]),
    error_description: z.string().meta({ description: "Prose for people; may change. Branch on `error`." }),
  });
}

const noStore = {
  "Cache-Control": z.literal("no-store"),
  Pragma: z.literal("no-cache"),
};

type Refusal = { codes: OAuthErrorCode[]; description: string; headers?: Record<string, z.ZodType> };

function oauthRefusals(refusals: Record<number, Refusal>): Record<string, ZodOpenApiResponseObject> {
  return Object.fromEntries(
    Object.entries(refusals).map(([status, r]) => [
      status,
      {
        description: `${r.description} Errors: ${r.codes.map((c) => `\`${c}\``).join(", ")}.`,
        headers: z.object({ ...noStore, ...r.headers }),
        content: { "application/json": { schema: oauthErrorSchema(r.codes) } },
      },
    ]),
  );
}

const retryAfter = (what: string) => ({ "Retry-After": z.string().meta({ description: `Seconds to wait${what}.` }) });

/** What a form endpoint (`oauthEndpoint`) refuses whatever it does, and its 429 of CONTRACT §10. */
function formEndpointRefusals(perMinute: number): Record<number, Refusal> {
  return {
    405: { codes: ["invalid_request"], description: "Another method than POST.", headers: { Allow: z.literal("POST") } },
    413: { codes: ["invalid_request"], description: `The body is larger than ${MAX_FORM_BYTES / 1024} KiB.` },
    429: {
      codes: ["slow_down"],
      description: `More than ${perMinute.toLocaleString("en-US")} requests a minute from this client or this address (failed ones count against the address).`,
      headers: retryAfter(""),
    },
    500: { codes: ["server_error"], description: "The service failed." },
    503: { codes: ["temporarily_unavailable"], description: "The database cannot be reached.", headers: retryAfter("") },
  };
}

/** 401 `invalid_client`, with the `Basic` challenge only when the client sent HTTP Basic (RFC 6749 §5.2). */
function invalidClient(baseUrl: string): Refusal {
  return {
    codes: ["invalid_client"],
    description:
      "Client authentication failed: an unknown client, a wrong secret, a confidential client without HTTP Basic, or a `client_secret` in the body (`client_secret_post` is not accepted).",
    headers: {
      "WWW-Authenticate": z
        .string()
        .optional()
        .meta({ description: `\`Basic realm="${baseUrl}", charset="UTF-8"\`, when the request sent HTTP Basic; not otherwise, so a browser shows no password prompt.` }),
    },
  };
}

const CLIENT_AUTH =
  "Client authentication (RFC 6749 §2.3): a confidential app sends `client_id:client_secret` with HTTP Basic (`client_secret_basic`, each part form-urlencoded first); a public client (a native, browser or assistant app, no secret) sends `client_id` in the form (`none`). `client_secret_post` is refused. Any origin may call it (CORS).";

/** The discovery documents and the keys: public JSON, any origin, GET or HEAD. */
function publicDocumentOperation(
  o: { operationId: string; summary: string; description: string; schema: z.ZodType; maxAge: number; readsDatabase?: boolean },
  problem: (codes: ProblemCode[]) => z.ZodType,
): ZodOpenApiOperationObject {
  const responses: Record<string, ZodOpenApiResponseObject> = {
    "200": {
      description: "The document.",
      headers: z.object({ "Cache-Control": z.literal(`public, max-age=${o.maxAge}`) }),
      content: { "application/json": { schema: o.schema } },
    },
    "405": {
      description: "Another method than GET, HEAD or OPTIONS. Codes: `method_not_allowed`.",
      headers: z.object({ Allow: z.literal("GET, HEAD, OPTIONS") }),
      content: { "application/problem+json": { schema: problem(["method_not_allowed"]) } },
    },
  };
  if (o.readsDatabase) {
    responses["503"] = {
      description: "The database cannot be reached; retry after `Retry-After` seconds. Codes: `service_unavailable`.",
      headers: z.object(retryAfter("")),
      content: { "application/problem+json": { schema: problem(["service_unavailable"]) } },
    };
  }
  return { operationId: o.operationId, summary: o.summary, description: o.description, tags: ["OAuth"], security: [], responses };
}

/** The OpenAPI tag of these paths, with what happens before the token endpoint: the athlete's authorization. */
export function oauthTag(env: Pick<Env, "baseUrl" | "apiBaseUrl" | "mcpUrl">) {
  return {
    name: "OAuth",
    description: [
      `The authorization server (RFC 6749, OAuth 2.1 rules), at the site root: \`${env.baseUrl}/oauth/…\` and \`${env.baseUrl}/.well-known/…\`, not under \`/v1\`. Its errors are RFC 6749 §5.2 JSON (\`{"error", "error_description"}\`), not problem documents.`,
      `**Authorization.** Send the athlete's browser to \`${env.baseUrl}/oauth/authorize\` with \`response_type=code\`, \`client_id\`, \`redirect_uri\` (exactly as registered, except that a public client registered with an \`http://127.0.0.1/…\` or \`http://[::1]/…\` redirect may come back on any port, RFC 8252 §7.3), \`scope\` (space-separated), \`state\`, \`code_challenge\` with \`code_challenge_method=S256\` (PKCE is required of every client; \`plain\` is refused) and \`resource=${env.apiBaseUrl}\` (or \`${env.mcpUrl}\`). Once the athlete allows, the browser comes back to \`redirect_uri\` with \`code\`, \`state\` and \`iss\` (RFC 9207: check it is \`${env.baseUrl}\`), or with \`error\`. The code is valid ${CODE_TTL_S} seconds, once; exchange it at \`POST /oauth/token\`.`,
      `**Lifetimes.** Access tokens: ${ACCESS_TOKEN_TTL_S / 60} minutes, RFC 9068 JWTs checked against their authorization on every request (an athlete who disconnects the app ends them at once). Refresh tokens: ${days(REFRESH_TOKEN_TTL_S)} days from issue, rotated on every use; a refresh that fails (\`invalid_grant\`) means the athlete must authorize again, not a retry.`,
    ].join("\n\n"),
  };
}

/**
 * The path items of the authorization server and discovery, keyed by path. `problem` is the
 * document's problem schema: the public documents answer a wrong method as /v1 does.
 */
export function oauthPaths(
  env: Pick<Env, "baseUrl" | "apiBaseUrl" | "mcpUrl" | "rateLimitOAuthToken">,
  problem: (codes: ProblemCode[]) => z.ZodType,
): Record<string, ZodOpenApiPathItemObject> {
  // Basic, or nothing beyond `client_id` in the form (a public client).
  const clientSecurity: Record<string, string[]>[] = [{ clientSecretBasic: [] }, {}];
  const token: ZodOpenApiOperationObject = {
    operationId: "requestToken",
    summary: "Exchange a code, refresh, or get a client-credentials token",
    description: [
      `- \`authorization_code\`: \`code\`, \`redirect_uri\`, \`code_verifier\` (PKCE S256). Answers an access token, a refresh token and the scopes granted. A code sent a second time is refused and revokes what it issued.`,
      `- \`refresh_token\`: \`refresh_token\`, optionally a narrower \`scope\`. Answers a new pair; the refresh token sent is used up (RFC 9700 rotation: sending it again revokes the authorization).`,
      `- \`client_credentials\` (confidential apps only, with HTTP Basic): an access token for the app itself, valid for \`/v1/app/*\` only, with no refresh token and no scope.`,
      CLIENT_AUTH,
    ].join("\n"),
    tags: ["OAuth"],
    security: clientSecurity,
    requestBody: { required: true, content: { "application/x-www-form-urlencoded": { schema: tokenForm(env) } } },
    responses: {
      "200": { description: "The tokens.", headers: z.object(noStore), content: { "application/json": { schema: TokenAnswer } } },
      ...oauthRefusals({
        400: {
          codes: ["invalid_request", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope", "invalid_target"],
          description:
            "`invalid_request`: not a form, a parameter missing or sent twice; `invalid_grant`: the code or refresh token is invalid, expired, used, revoked, another client's, or its `redirect_uri` or `code_verifier` does not match (authorize again); `unauthorized_client`: `client_credentials` from a public client; `unsupported_grant_type`; `invalid_scope`; `invalid_target`: a `resource` other than the authorization's.",
        },
        401: invalidClient(env.baseUrl),
        ...formEndpointRefusals(env.rateLimitOAuthToken),
      }),
    },
  };
  const revoke: ZodOpenApiOperationObject = {
    operationId: "revokeToken",
    summary: "Revoke a token (RFC 7009)",
    description: [
      "Revoking a refresh token or an athlete's access token ends its token family: the refresh token and every access token issued with it. Any token the client does not own, or that is unknown or expired, is answered 200 too, as RFC 7009 §2.2 asks. A client-credentials token cannot be revoked (`unsupported_token_type`): it expires within the hour, and rotating the app's secret ends it.",
      CLIENT_AUTH,
    ].join("\n\n"),
    tags: ["OAuth"],
    security: clientSecurity,
    requestBody: { required: true, content: { "application/x-www-form-urlencoded": { schema: RevocationForm } } },
    responses: {
      "200": { description: "Revoked, or nothing of this client's to revoke. No body.", headers: z.object({ "Cache-Control": z.literal("no-store") }) },
      ...oauthRefusals({
        400: { codes: ["invalid_request", "unsupported_token_type"], description: "`invalid_request`: not a form, `token` missing, a parameter sent twice; `unsupported_token_type`: this client's own client-credentials token." },
        401: invalidClient(env.baseUrl),
        ...formEndpointRefusals(env.rateLimitOAuthToken),
      }),
    },
  };
  const register: ZodOpenApiOperationObject = {
    operationId: "registerClient",
    summary: "Register a public client (RFC 7591)",
    description: `Dynamic Client Registration, for assistants and other clients the service has never seen: no credential needed, public clients only (\`none\`: PKCE, no secret). The client then asks the athlete's consent like any app. At most ${REGISTRATIONS_PER_HOUR} registrations an hour per source address, refused ones included; a client no athlete authorized within a day is removed. Any origin may call it (CORS).`,
    tags: ["OAuth"],
    security: [],
    requestBody: { required: true, content: { "application/json": { schema: RegistrationRequest } } },
    responses: {
      "201": { description: "The client registered, with every member kept.", headers: z.object(noStore), content: { "application/json": { schema: RegisteredClientAnswer } } },
      ...oauthRefusals({
        400: {
          codes: ["invalid_client_metadata", "invalid_redirect_uri"],
          description: "`invalid_redirect_uri`: no redirect URI, more than 10, or one that is not `https://` or an `http://` loopback URL; `invalid_client_metadata`: not JSON, or a member the service does not accept (a confidential client, another grant type).",
        },
        405: { codes: ["invalid_request"], description: "Another method than POST.", headers: { Allow: z.literal("POST") } },
        413: { codes: ["invalid_client_metadata"], description: "The body is too large for client metadata." },
        429: { codes: ["slow_down"], description: `More than ${REGISTRATIONS_PER_HOUR} registrations within the hour from this address.`, headers: retryAfter("") },
        500: { codes: ["server_error"], description: "The service failed." },
        503: { codes: ["temporarily_unavailable"], description: "The database cannot be reached.", headers: retryAfter("") },
      }),
    },
  };
  const protectedResource = (which: "v1" | "mcp", resource: string): ZodOpenApiOperationObject =>
    publicDocumentOperation(
      {
        operationId: which === "v1" ? "getApiResourceMetadata" : "getMcpResourceMetadata",
        summary: `Protected resource metadata of ${which === "v1" ? "the API" : "the MCP server"} (RFC 9728)`,
        description: `Which authorization server issues tokens for \`${resource}\`, and the scopes it takes. A 401 from it names this document in \`WWW-Authenticate: Bearer resource_metadata="…"\`.`,
        schema: ProtectedResourceMetadata,
        maxAge: 3600,
      },
      problem,
    );
  return {
    "/oauth/token": { post: token },
    "/oauth/revoke": { post: revoke },
    "/oauth/register": { post: register },
    "/oauth/jwks": {
      get: publicDocumentOperation(
        {
          operationId: "getJwks",
          summary: "The keys that sign access tokens (JWKS)",
          description: "Verify an access token's ES256 signature with the key its `kid` names. A token whose `kid` a cached copy lacks was signed by a newer key: fetch the set again.",
          schema: JsonWebKeySet,
          maxAge: 300,
          readsDatabase: true,
        },
        problem,
      ),
    },
    "/.well-known/oauth-authorization-server": {
      get: publicDocumentOperation(
        {
          operationId: "getAuthorizationServerMetadata",
          summary: "Authorization server metadata (RFC 8414)",
          description: "The endpoints, grants, client authentication methods (`client_secret_basic`, `none`), PKCE methods (`S256`) and scopes of this authorization server.",
          schema: AuthorizationServerMetadata,
          maxAge: 3600,
        },
        problem,
      ),
    },
    "/.well-known/oauth-protected-resource/v1": { get: protectedResource("v1", env.apiBaseUrl) },
    "/.well-known/oauth-protected-resource/mcp": { get: protectedResource("mcp", env.mcpUrl) },
  };
}
