import { z } from "zod";
import { createDocument } from "zod-openapi";
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject, ZodOpenApiResponseObject } from "zod-openapi";
import { EVENT_KINDS, EVENT_TYPES, WebhookEvent } from "../events/catalog";
import { PROBLEM_CODES, type ProblemCode } from "../http/errors";
import type { Operation } from "../http/operation";
import { IdempotencyKey } from "../http/schemas";
import type { FileAnswer } from "../http/file-body";
import { SCOPES } from "../auth/scopes";
import { DELIVERY_ID_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER } from "../webhooks/signature";
import { HandshakeReport } from "../webhooks/subscriptions/schemas";
import { OPERATIONS } from "./operations";
import { MCP_TOOLS } from "../mcp/tools";
import { getEnv } from "../env";
import { DOCS_OAUTH_REDIRECT_PATH } from "./docs-redirect";
import { oauthPaths, oauthTag } from "./oauth";

const STATUS_TEXT: Record<number, string> = {
  400: "The request is malformed.",
  401: "No token, or one not valid for this API.",
  402: "The token's account has no active subscription or trial.",
  403: "The token lacks the scope, or may not act on the athlete or team named.",
  404: "No such resource, or not visible to this token.",
  405: "The path does not serve this method; `Allow` lists those it does.",
  409: "Conflicts with the current state, or a request with this Idempotency-Key is in progress.",
  413: "The body is larger than 1 MiB.",
  422: "The Idempotency-Key was used with a different body.",
  429: "A rate limit was exceeded; retry after `Retry-After` seconds.",
  500: "The service failed; `trace_id` identifies the failure in its log.",
  503: "The database cannot be reached; retry after `Retry-After` seconds.",
};

/**
 * The rate-limit windows, as this service is configured (RATE_LIMIT_15MIN, RATE_LIMIT_DAILY):
 * requests per window; and the token endpoint's, a minute per client and per address (RATE_LIMIT_OAUTH_TOKEN).
 */
export type RateLimits = { "15min": number; daily: number; oauthToken: number };

/** The headers every answer carries; their examples are the configured windows. */
function rateLimitHeaders(limits: RateLimits) {
  return z.object({
    RateLimit: z
      .string()
      .meta({
        description: `Remaining requests and seconds to reset per window: \`"15min";r=${limits["15min"] - 1};t=840, "daily";r=${limits.daily - 1};t=51000\`. Absent from a 503 answered while the database cannot be reached: nothing could be counted.`,
      }),
    "RateLimit-Policy": z.string().meta({ description: `The windows: \`"15min";q=${limits["15min"]};w=900, "daily";q=${limits.daily};w=86400\`.` }),
    "Request-Id": z.string().meta({ description: "Identifies this request in the service's log." }),
  });
}
type RateLimitHeaders = ReturnType<typeof rateLimitHeaders>;

function problemSchema(codes: ProblemCode[]) {
  const extensions = codes.includes("webhook_verification_failed")
    ? { handshake: HandshakeReport.optional().meta({ description: "With `webhook_verification_failed`: what the endpoint did with the handshake." }) }
    : {};
  return z.object({
    ...extensions,
    type: z.url().meta({ description: "`{base_url}/problems/{code}`: a page explaining the code." }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().meta({ description: "Prose for people; may change. Branch on `code`." }),
    code: z.enum(codes as [ProblemCode, ...ProblemCode[]]),
    errors: z
      .array(z.object({ field: z.string(), code: z.string(), detail: z.string() }))
      .optional()
      .meta({ description: "Each invalid field, on validation failures." }),
    trace_id: z.string().optional().meta({ description: "On 500s: the id under which the failure was logged." }),
  });
}

/** A file answer (an export): raw bytes in one of the declared media types, to be saved, not rendered. */
function fileResponseObject(description: string, files: FileAnswer, rateHeaders: RateLimitHeaders): ZodOpenApiResponseObject {
  // OpenAPI 3.1 §4.8.24.4: binary content is described by its media type alone, with no schema.
  return {
    description: `${description} ${files.description}`,
    headers: rateHeaders.extend({
      "Content-Disposition": z.string().meta({ description: 'Always `attachment; filename="…"` (with `filename*` for names beyond ASCII).' }),
    }),
    content: Object.fromEntries(files.contentTypes.map((t) => [t, {}])),
  };
}

/** The codes an operation can answer, grouped by status: its own plus those every operation shares. */
function problemCodes(op: Operation): Map<number, ProblemCode[]> {
  const common: ProblemCode[] = [
    "token_missing",
    "token_invalid",
    "token_expired",
    "token_revoked",
    op.auth === "app" ? "client_credentials_required" : "client_credentials_not_allowed",
    "method_not_allowed",
    "rate_limited",
    "internal_error",
    "service_unavailable",
  ];
  if (op.auth === "athlete") common.push("subscription_required");
  if (op.scope) common.push("insufficient_scope");
  // Every operation: a request the front server cannot read as one (two Authorization headers,
  // say) is refused before any operation sees it, whatever the operation takes.
  common.push("invalid_request");
  if (op.body) common.push("payload_too_large");
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of new Set([...op.errors, ...common])) {
    const status = PROBLEM_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus.entries()].sort(([a], [b]) => a - b));
}

/**
 * JSON, or for a file upload `multipart/form-data`: the text fields of `op.body` and the file
 * part, as binary, and nothing else (the service refuses other fields, as `op.body` does).
 */
function requestBodyOf(op: Operation): Pick<ZodOpenApiOperationObject, "requestBody"> {
  if (!op.body) return {};
  if (!op.multipart) return { requestBody: { required: true, content: { "application/json": { schema: op.body } } } };
  const made = forms.get(op.body);
  if (made) return made;
  const { fileField, maxFileBytes } = op.multipart;
  // An optional text field's example is empty: Swagger UI fills each form field with its schema's
  // sample ("string", an enum's first value) and sends every field that is not empty, so a
  // placeholder would otherwise go out as the athlete's own (an activity named "string", and an
  // `external_id` that makes the next try a duplicate). An empty field is left out of the request.
  const fields = Object.fromEntries(
    Object.entries((op.body as z.ZodObject).shape).map(([name, schema]) => [name, schema.isOptional() ? schema.meta({ example: "" }) : schema]),
  );
  const form = z
    .strictObject({
      [fileField]: z.string().meta({
        format: "binary",
        description: `The file, at most ${maxFileBytes / (1024 * 1024)} MiB (decompressed too). Its kind is recognised from the content.`,
      }),
      ...fields,
    })
    .meta({ id: `${op.operationId[0]!.toUpperCase()}${op.operationId.slice(1)}Form` });
  const body = { requestBody: { required: true, content: { "multipart/form-data": { schema: form } } } };
  forms.set(op.body, body);
  return body;
}

/** Each upload form once, named after the first operation that takes it (`atOwnId` serves one at two paths). */
const forms = new WeakMap<z.ZodType, Pick<ZodOpenApiOperationObject, "requestBody">>();

const OWN_PREFIX = "/v1/athletes/me/";

/**
 * A write at `/v1/athletes/me/…` as the `{athlete_id}` path serves it too: the `/me` route
 * files are the `{athlete_id}` ones at `athlete_id=me` (app/v1/athletes/me/…), and the verb
 * takes the caller's own id as `me` (`assertSelf`). Records are only ever the caller's own, so
 * any other id, a coach's athletes' included, is 403 `athlete_not_reachable`.
 */
function atOwnId(op: Operation): Operation | undefined {
  if (op.method === "GET" || !op.path.startsWith(OWN_PREFIX)) return undefined;
  const mePath = op.path;
  return {
    ...op,
    path: `/v1/athletes/{athlete_id}/${mePath.slice(OWN_PREFIX.length)}`,
    operationId: `${op.operationId}ByAthleteId`,
    summary: `${op.summary}, by the athlete's own id`,
    description: `\`${op.method} ${mePath}\`, at the token's own athlete id, with the same request and answer; any other id is 403 \`athlete_not_reachable\`. ${op.description ?? ""}`.trim(),
    params: z.object({
      athlete_id: z.string().min(1).meta({
        description: "`me`, or the token's own athlete id (the `id` of `GET /v1/athletes/me`). Any other id is 403 `athlete_not_reachable`, a coach's athletes' included: records are only created by the athlete.",
        example: "me",
      }),
    }),
    errors: [...op.errors, "athlete_not_reachable"],
  };
}

function toOpenApiOperation(op: Operation, rateHeaders: RateLimitHeaders): ZodOpenApiOperationObject {
  const scopes = [op.scope, op.extraScope].filter((s) => s !== undefined);
  const responses: Record<string, ZodOpenApiResponseObject> = {
    [String(op.response.status)]: {
      description: op.response.description,
      headers: rateHeaders.extend({
        ...(op.response.location ? { Location: z.string().meta({ description: "Where to read what was made (an upload: poll it until it is done)." }) } : {}),
        ...(op.idempotent ? { "Idempotent-Replayed": z.literal("true").optional().meta({ description: "The first answer to this Idempotency-Key, given again." }) } : {}),
      }),
      ...(op.response.schema ? { content: { "application/json": { schema: op.response.schema } } } : {}),
    },
  };
  if (op.response.files) responses[String(op.response.status)] = fileResponseObject(op.response.description, op.response.files, rateHeaders);
  for (const [status, codes] of problemCodes(op)) {
    const headers: Record<string, z.ZodType> = {};
    if (status === 401) headers["WWW-Authenticate"] = z.string().meta({ description: 'Bearer resource_metadata="{base_url}/.well-known/oauth-protected-resource/v1"' });
    if (status === 403 && codes.includes("insufficient_scope")) {
      // Sent with insufficient_scope only (RFC 6750 §3.1); another 403 of the same operation has none.
      const challenge = z.string().meta({ description: 'Bearer error="insufficient_scope", scope="…" (with `insufficient_scope` only)' });
      headers["WWW-Authenticate"] = codes.length > 1 ? challenge.optional() : challenge;
    }
    if (status === 405) headers.Allow = z.string();
    if (status === 429 || status === 503 || (status === 409 && codes.includes("idempotency_key_in_use"))) {
      const wait = z.string().meta({ description: status === 409 ? "Seconds to wait (with `idempotency_key_in_use`)." : "Seconds to wait." });
      headers["Retry-After"] = status === 409 && codes.length > 1 ? wait.optional() : wait;
    }
    // A refusal counted against the windows says where they stand, as a success does (CONTRACT §10).
    for (const [name, schema] of Object.entries(rateHeaders.shape)) headers[name] = schema.optional();
    responses[String(status)] = {
      description: `${(status === 413 && op.multipart ? `The file is larger than ${op.multipart.maxFileBytes / (1024 * 1024)} MiB, as sent or decompressed.` : STATUS_TEXT[status]) ?? ""} Codes: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
      headers: z.object(headers),
      content: { "application/problem+json": { schema: problemSchema(codes) } },
    };
  }
  const header = op.idempotent
    ? z.object({
        "Idempotency-Key": IdempotencyKey.optional()
          .meta({ description: "Makes retries safe: the same key and body within 24 hours returns the first answer (`Idempotent-Replayed: true`). 1 to 255 visible ASCII characters (no spaces): a UUID, say." }),
      })
    : undefined;
  return {
    operationId: op.operationId,
    summary: op.summary,
    description: [
      op.description,
      scopes.length ? `Requires scope${scopes.length > 1 ? "s" : ""} ${scopes.map((s) => `\`${s}\``).join(" and ")}.` : "Requires a client-credentials token.",
    ]
      .filter(Boolean)
      .join("\n\n"),
    tags: [op.tag],
    // Either credential works: a PAT (bearer) or an OAuth access token carrying the scope.
    security: op.auth === "app" ? [{ oauth2: [] }] : [{ bearerAuth: [] }, { oauth2: scopes }],
    requestParams: {
      ...(op.params ? { path: op.params as z.ZodObject } : {}),
      ...(op.query ? { query: op.query as z.ZodObject } : {}),
      ...(header ? { header } : {}),
    },
    ...requestBodyOf(op),
    responses,
  };
}

/** OpenAPI 3.1 `webhooks`: what the service POSTs to a subscriber, one entry for each kind in the event catalog. */
function webhookDeliveries(): ZodOpenApiPathsObject {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => {
      const kind: (typeof EVENT_KINDS)[keyof typeof EVENT_KINDS] = EVENT_KINDS[type];
      const to =
        kind.to === "grants"
          ? `Sent to each subscription covering it whose app the athlete had authorized, with \`${kind.scope}\`, when it occurred.`
          : kind.to === "app"
            ? "Sent only to the subscriptions covering it of the app the event concerns."
            : "Sent only when asked for, to the one subscription named (`POST /v1/app/webhooks/{id}/send-test-event`); no subscription can subscribe to it.";
      const operation: ZodOpenApiOperationObject = {
        operationId: `${type.replace(/\.(.)/g, (_, c: string) => c.toUpperCase())}Event`,
        summary: kind.description,
        description: `${to} The body is the thin event; fetch the object from the API for detail.`,
        tags: ["Webhooks"],
        requestParams: {
          header: z.object({
            [SIGNATURE_HEADER]: z.string().meta({ description: "`t=<unix>,v1=<hex>`: HMAC-SHA256 of `<t>.<raw body>` with the subscription's secret (one `v1` per live secret)." }),
            [EVENT_ID_HEADER]: z.string().meta({ description: "The event's id (`evt_…`), the same on every retry and redelivery: deduplicate on it." }),
            [DELIVERY_ID_HEADER]: z.string().meta({ description: "The delivery's id (`whd_…`), as the delivery log shows it." }),
          }),
        },
        requestBody: {
          required: true,
          content: { "application/json": { schema: WebhookEvent.extend({ type: z.literal(type), object_type: z.literal(kind.objectType) }) } },
        },
        responses: {
          "2XX": { description: "Any 2xx acknowledges the delivery. Any other answer, or none, is retried with backoff, and a long enough streak of failures disables the subscription." },
        },
      };
      return [type, { post: operation }];
    }),
  );
}

let cached: { key: string; doc: ReturnType<typeof createDocument> } | undefined;

/**
 * The OpenAPI 3.1 document, built from the same zod schemas that validate requests and shape
 * responses, for the service at `baseUrl` with its rate-limit windows (by default as configured).
 */
export function openApiDocument(
  baseUrl: string,
  limits: RateLimits = { "15min": getEnv().rateLimit15Min, daily: getEnv().rateLimitDaily, oauthToken: getEnv().rateLimitOAuthToken },
) {
  const key = JSON.stringify([baseUrl, limits["15min"], limits.daily, limits.oauthToken]);
  if (cached?.key === key) return cached.doc;
  const headers = rateLimitHeaders(limits);
  const paths: Record<string, Record<string, ZodOpenApiOperationObject>> = {};
  for (const op of OPERATIONS.flatMap((o) => [o, atOwnId(o)].filter((x) => x !== undefined))) {
    (paths[op.path] ??= {})[op.method.toLowerCase()] = toOpenApiOperation(op, headers);
  }
  // The resources as lib/env.ts derives them from the base URL.
  const authServer = { baseUrl, apiBaseUrl: `${baseUrl}/v1`, mcpUrl: `${baseUrl}/mcp`, rateLimitOAuthToken: limits.oauthToken };
  const doc = createDocument({
    openapi: "3.1.0",
    info: {
      title: "Athlete Activity Service API",
      version: "1.0.0",
      description: [
        "Athletes' training data over HTTP. All values are SI units with unit-suffixed names (`distance_m`, `average_heart_rate_hz`: 150 bpm is 2.5).",
        "Activity times are local wall-clock (`start_local`, no offset), read against the athlete's `timezone`; instants are RFC 3339 UTC.",
        "Errors are RFC 9457 problem documents: branch on `code`. Paged lists are `{data, next_cursor}`, keyset-paginated with `limit` (1–200, default 50) and `cursor` (an activity's laps come whole, as `{data}`). A query parameter an operation does not list is a 400 `invalid_request` naming it.",
        `Rate limits: ${limits["15min"].toLocaleString("en-US")} requests per 15 minutes and ${limits.daily.toLocaleString("en-US")} per day, per app or per personal-access-token owner; every answer carries \`RateLimit\` and \`RateLimit-Policy\`.`,
        `**OAuth.** The authorization server's endpoints (\`/oauth/token\`, \`/oauth/revoke\`, \`/oauth/register\`, \`/oauth/jwks\`) and the discovery documents (\`/.well-known/…\`) are at the site root, under the tag OAuth; they answer RFC 6749 §5.2 errors (\`{"error", "error_description"}\`), not problem documents.`,
        `**Assistants (MCP).** \`${baseUrl}/mcp\` serves the same data over the Model Context Protocol (stateless Streamable HTTP, protocol 2025-11-25) to assistants an athlete connects with OAuth (their tokens are for \`/mcp\` only) or to a personal access token. Its tools only read, each the \`/v1\` verb with its schemas: ${MCP_TOOLS.map((t) => `\`${t.name}\` (\`${t.scope}\`)`).join(", ")}. \`tools/list\` shows those the token's scopes allow.`,
      ].join("\n\n"),
    },
    servers: [{ url: baseUrl }],
    tags: [
      { name: "Athletes", description: "Profiles. `me` is the token's athlete; coaches reach their teams' active members." },
      { name: "Activities", description: "Activities in SI units, newest first." },
      { name: "Uploads", description: "Activity files (FIT, GPX, TCX) sent for the service to read into activities with their streams and laps." },
      { name: "Metrics", description: "Body metrics: mass, resting heart rate, HRV, sleep." },
      { name: "Teams", description: "Discover the athlete ids a coach's token may pass." },
      { name: "App", description: "The app itself, with a client-credentials token: usage." },
      {
        name: "Webhooks",
        description:
          "The app's webhook subscriptions, their delivery logs and the events feed, with a client-credentials token. Deliveries are `POST`s of a thin event signed in `Service-Signature: t=<unix>,v1=<hex>` (HMAC-SHA256 of `<t>.<raw body>` with the subscription's secret).",
      },
      oauthTag(authServer),
    ],
    components: {
      securitySchemes: {
        oauth2: {
          type: "oauth2",
          description:
            `OAuth 2.0 (RFC 6749) with PKCE S256 required. Authorization-code tokens act for the athlete who approved the app; client-credentials tokens act as the app and serve only \`/v1/app/*\`. Access tokens are RFC 9068 JWTs valid for one hour; refresh tokens rotate on every use. To authorize from this reference (Authorize), register an app at ${baseUrl}/developers/apps with the redirect URI \`${baseUrl}${DOCS_OAUTH_REDIRECT_PATH}\` and give its client id (and, for a confidential app, its secret).`,
          flows: {
            authorizationCode: {
              authorizationUrl: `${baseUrl}/oauth/authorize`,
              tokenUrl: `${baseUrl}/oauth/token`,
              refreshUrl: `${baseUrl}/oauth/token`,
              scopes: Object.fromEntries(Object.entries(SCOPES).map(([s, d]) => [s, d.plain])),
            },
            clientCredentials: { tokenUrl: `${baseUrl}/oauth/token`, scopes: {} },
          },
        },
        clientSecretBasic: {
          type: "http",
          scheme: "basic",
          description:
            "A confidential app's `client_id` and `client_secret` (`client_secret_basic`, RFC 6749 §2.3.1), for `/oauth/token` and `/oauth/revoke`. A public client sends no secret: only `client_id` in the form, and PKCE.",
        },
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: `A personal access token (\`aas_pat_…\`, created at ${baseUrl}/settings/tokens) or an OAuth access token. Scopes: ${Object.entries(
            SCOPES,
          )
            .map(([s, d]) => `\`${s}\` (${d.plain})`)
            .join("; ")}.`,
        },
      },
    },
    paths: { ...paths, ...oauthPaths(authServer, problemSchema) },
    webhooks: webhookDeliveries(),
  });
  cached = { key, doc };
  return doc;
}
