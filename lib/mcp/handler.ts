import "server-only";
import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  JSONRPCRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult,
  type JSONRPCRequest,
} from "@modelcontextprotocol/sdk/types.js";
import type { Actor, Ctx } from "../auth/actor";
import { hasScope } from "../auth/require-scope";
import { SCOPE_NAMES, type Scope } from "../auth/scopes";
import { getDb } from "../db/client";
import { getEnv } from "../env";
import { baseHeaders, checkBilling, errorToResponse, identify, rateLimited, rateLimitOf } from "../http/api-route";
import { dropRestAfterAnswer, readJsonBody } from "../http/body";
import { isRawJson } from "../http/raw-json";
import { requestStarted } from "../http/requests-first";
import { ApiError } from "../http/errors";
import { isDatabaseUnavailable, isRetriable } from "../http/db-errors";
import { printableExcerpt } from "../text";
import { missingIsRequired, unstorableText, validationError } from "../http/validation";
import type { RateLimitResult } from "../http/rate-limit";
import { errorText, log } from "../log";
import { resourceMetadataUrl } from "../oauth/resources";
import { MCP_TOOLS, type McpTool } from "./tools";
import { knownLengthResponse } from "../http/known-length";

// POST /mcp: the MCP server (CONTRACT §12), Streamable HTTP, stateless: every request stands
// alone, so a new server and transport answer each one (no Mcp-Session-Id, no initialize
// needed first). Around the SDK, the same gates as /v1 in the same order: a token for /mcp,
// its rate-limit window, the subscription, and the scopes; the tools then call the /v1 verbs.

const SERVER_INFO = { name: "athlete-activity-service", title: "Athlete Activity Service", version: "1.0.0" };

const INSTRUCTIONS =
  "Training data of one athlete (and, for a coach, of the athletes they coach): activities with their totals, samples (streams) and laps, body metrics, and weekly or monthly volume. All values are SI units (metres, seconds, metres per second, heart rate in beats per second: multiply by 60 for beats per minute). Dates are local to the athlete's timezone (get_profile tells it).";

/**
 * A `tools/call` of a known tool: the tool, its arguments as its input schema reads them, and
 * the arguments holding text PostgreSQL cannot store (`unstorableText`), by name.
 */
type ToolCall = { tool: McpTool; args: ReturnType<McpTool["input"]["safeParse"]>; unstorable: string[] };

/** The tool call a JSON-RPC message makes, read once for the scope check and the answer; undefined for any other message. */
function toolCallOf(message: unknown): ToolCall | undefined {
  const m = message as { method?: unknown; params?: { name?: unknown; arguments?: unknown } } | null;
  if (m?.method !== "tools/call") return undefined;
  const tool = MCP_TOOLS.find((t) => t.name === m.params?.name);
  const raw = m.params?.arguments ?? {};
  return tool && { tool, args: tool.input.safeParse(raw, { error: missingIsRequired, reportInput: true }), unstorable: unstorableText(raw) };
}

/**
 * The request schemas of the methods this server answers: the SDK's Server answers `initialize`
 * and `ping`, McpServer `tools/list` and `tools/call`. Any other method is the SDK's -32601.
 */
const REQUEST_SCHEMAS = new Map<string, z.ZodType>(
  [InitializeRequestSchema, PingRequestSchema, ListToolsRequestSchema, CallToolRequestSchema].map((s) => [s.shape.method.value, s]),
);

/**
 * A request whose params its method's schema refuses, as JSON-RPC -32602 (JSON-RPC 2.0 §5.1)
 * in a few words naming each bad member. Left to the SDK, the schema's ZodError escapes its
 * request handler without a JSON-RPC code, and the SDK answers -32603 "internal error" with
 * the whole issue list as JSON for a message.
 */
function malformedParams(request: JSONRPCRequest): string | undefined {
  const parsed = REQUEST_SCHEMAS.get(request.method)?.safeParse(request);
  if (!parsed || parsed.success) return undefined;
  const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.map(String).join(".") || "params"}: ${i.message}`);
  const more = parsed.error.issues.length > issues.length ? "; …" : "";
  return `Invalid params for ${request.method}: ${issues.join("; ")}${more}.`;
}

/**
 * The id of a message shaped as a request (`"jsonrpc": "2.0"`, a string or integer id, a
 * method, params an object if sent), whatever its params hold; undefined for anything else.
 */
function envelopeId(body: unknown): string | number | undefined {
  const m = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown } | null;
  if (typeof m !== "object" || m === null || Array.isArray(m) || m.jsonrpc !== "2.0" || typeof m.method !== "string") return undefined;
  if (m.params !== undefined && (typeof m.params !== "object" || m.params === null || Array.isArray(m.params))) return undefined;
  // An integer id beyond what a number holds exactly (1e300) is no id a client could match its answer to.
  return typeof m.id === "string" || Number.isSafeInteger(m.id) ? (m.id as string | number) : undefined;
}

/**
 * A `tools/call` naming no tool this server has: a protocol error (-32602, MCP 2025-11-25
 * "Error Handling"), not a tool result. A known tool the token's scopes do not allow is a 403
 * step-up instead (CONTRACT §12).
 */
function unknownTool(message: unknown): { id: unknown; name: string } | undefined {
  const m = message as { id?: unknown; method?: unknown; params?: { name?: unknown } } | null;
  if (m?.method !== "tools/call" || m.id === undefined) return undefined;
  const name = m.params?.name;
  if (typeof name === "string" && MCP_TOOLS.some((t) => t.name === name)) return undefined;
  // Named back in at most 200 printable characters, as argument names are (`invalidCall`); a name
  // that held invisible characters says so, or "get_profile\u200b" would read as a tool it lists.
  const text = typeof name === "string" ? name : String(JSON.stringify(name ?? null));
  const shown = printableExcerpt(text, 200);
  const hidden = typeof name === "string" && shown !== name && Array.from(name).length <= 200;
  return { id: m.id, name: hidden ? `${shown} (with invisible, control or space characters in the name)` : shown };
}

/** A JSON-RPC error answering request `id` (HTTP 200: the transport carried it; the request failed). */
function jsonRpcError(id: unknown, code: number, message: string, headers: Headers): Response {
  headers.set("Content-Type", "application/json");
  return knownLengthResponse(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }), { status: 200, headers });
}

/** The scopes a tool call needs beyond what the token has. */
function missingScopes({ tool, args }: ToolCall, actor: Actor): { tool: McpTool; missing: Scope[] } | undefined {
  const needed = args.success && tool.scopesFor ? tool.scopesFor(args.data) : [tool.scope];
  const missing = needed.filter((s) => !hasScope(actor, s));
  return missing.length ? { tool, missing } : undefined;
}

/**
 * 403 `insufficient_scope` whose challenge names every scope the client should ask for: those the
 * token has plus those missing, so a step-up authorization loses nothing (CONTRACT §12).
 */
function stepUp(actor: Actor, tool: McpTool, missing: Scope[]): ApiError {
  const has = actor.kind === "pat" || actor.kind === "oauth" ? [...actor.scopes] : [];
  const scope = SCOPE_NAMES.filter((s) => has.includes(s) || missing.includes(s)).join(" ");
  return new ApiError("insufficient_scope", `The ${tool.name} tool needs the ${missing.map((s) => `\`${s}\``).join(" and ")} scope${missing.length > 1 ? "s" : ""}.`, {
    headers: { "WWW-Authenticate": `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${resourceMetadataUrl(getEnv(), "mcp")}"` },
  });
}

/** A tool's answer: its structured content as JSON text, or the words of its error. */
type ToolAnswer = { ok: true; json: string } | { ok: false; text: string };

/**
 * Runs a tool with arguments its input schema has already parsed. What /v1 answers with a
 * problem (not found, not reachable, a bad range) is the tool's error, in the same words; a
 * failure of the service is logged and named by the trace id. A database out of reach (or a
 * service too busy) is thrown on, to be answered 503 with `Retry-After` as /v1 answers it
 * (CONTRACT §3): the client can tell a moment's outage from a fault and try again.
 */
async function runTool(tool: McpTool, ctx: Ctx, args: Record<string, unknown>, traceId: string): Promise<ToolAnswer> {
  try {
    const value = await tool.run(ctx, args);
    return { ok: true, json: isRawJson(value) ? value.text : JSON.stringify(value) };
  } catch (err) {
    if (isDatabaseUnavailable(err) || isRetriable(err)) throw err;
    if (err instanceof ApiError && err.status < 500) return { ok: false, text: err.message };
    log.error("mcp tool failed", { trace_id: traceId, tool: tool.name, error: errorText(err) });
    return { ok: false, text: `The service failed. Quote trace id ${traceId} when reporting it.` };
  }
}

/** The CallToolResult of an answer: the structured content, and the same JSON as text (MCP's advice for older clients). */
function toolResult(answer: ToolAnswer): CallToolResult {
  if (!answer.ok) return { isError: true, content: [{ type: "text", text: answer.text }] };
  return { content: [{ type: "text", text: answer.json }], structuredContent: JSON.parse(answer.json) as Record<string, unknown> };
}

/**
 * Checks JSON Schemas the SDK is given at run time (an elicitation's, which no tool asks for).
 * One for the process: the SDK would otherwise build an Ajv instance with every server, that is
 * with every request (4% of a `tools/call`'s CPU).
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/**
 * A server with the tools the token's scopes allow: `tools/list` shows only those. The SDK
 * answers whatever a tool throws as a tool error; an outage `runTool` throws on is kept in
 * `outage` instead, for `sdkAnswer` to answer 503.
 */
function serverFor(ctx: Ctx, traceId: string, outage: { err?: unknown }): McpServer {
  // Tools declared whatever the token allows: `tools/list` for a token that allows none answers
  // an empty list (the SDK sets its tool handlers up only with a capability or a first tool).
  const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS, jsonSchemaValidator, capabilities: { tools: {} } });
  for (const tool of MCP_TOOLS) {
    if (!hasScope(ctx.actor, tool.scope)) continue;
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, outputSchema: tool.output, annotations: { readOnlyHint: true, openWorldHint: false } },
      async (args: Record<string, unknown>) => {
        try {
          return toolResult(await runTool(tool, ctx, args, traceId));
        } catch (err) {
          outage.err = err;
          throw err;
        }
      },
    );
  }
  // The SDK declares `listChanged: true` with its first tool; a server that answers each POST on
  // its own never sends `notifications/tools/list_changed`, so it says so.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}

/** The part of a media type before its parameters, lower-cased. */
const mediaType = (header: string | null) => header?.split(";")[0]!.trim().toLowerCase();

/**
 * What the request's headers leave to be answered, before anything in the message is looked at:
 * `sdk` for an Accept or Content-Type the SDK's transport answers itself (406, 415), `version`
 * for an MCP-Protocol-Version it does not support (answered here: the transport checks it on
 * every message but `initialize`, which it would answer 200), null when the headers are taken.
 */
function headersRefused(req: Request): "sdk" | "version" | null {
  const accept = req.headers.get("accept") ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) return "sdk";
  if (mediaType(req.headers.get("content-type")) !== "application/json") return "sdk";
  const version = req.headers.get("mcp-protocol-version");
  return version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version) ? null : "version";
}

/** A JSON-RPC response or error response sent to this server (no `method`). */
function isResponseMessage(body: unknown): boolean {
  return typeof body === "object" && body !== null && !Array.isArray(body) && !("method" in body) && ("result" in body || "error" in body);
}

/**
 * A `tools/call` that the SDK's server would answer with the tool's result, answered here in
 * the same JSON-RPC response without building that server. Per request, the SDK's server
 * validates the answer against the tool's outputSchema, parses and serialises it again and
 * tears down what it built: measured on the bench (`npm run bench -- mcp`), a call of
 * `list_activities` cost nearly twice the /v1 list it wraps. Here a list's JSON text goes out
 * as it came from the verb, as /v1 sends it, and outside production it is checked against the
 * outputSchema first, as /v1 checks its SQL-built answers (lib/http/api-route.ts), so the tests
 * hold both to the schema.
 *
 * Null for anything else, which the SDK answers: any other method, a message it would refuse,
 * a tool not listed for the token, params it does not know. Headers the transport refuses and
 * invalid arguments never get here (`sdkAnswer` first, `invalidCall`).
 */
async function answerToolCall(body: unknown, toolCall: ToolCall | undefined, ctx: Ctx, traceId: string): Promise<{ json: string } | null> {
  if (!toolCall?.args.success || !hasScope(ctx.actor, toolCall.tool.scope)) return null;
  const message = JSONRPCRequestSchema.safeParse(body);
  if (!message.success || message.data.method !== "tools/call") return null;
  const call = CallToolRequestSchema.safeParse(message.data);
  if (!call.success || Object.keys(call.data.params).some((k) => k !== "name" && k !== "arguments" && k !== "_meta")) return null;

  const { tool } = toolCall;
  const answer = await runTool(tool, ctx, toolCall.args.data, traceId);
  const id = JSON.stringify(message.data.id);
  if (!answer.ok) return { json: `{"result":${JSON.stringify(toolResult(answer))},"jsonrpc":"2.0","id":${id}}` };
  if (process.env.NODE_ENV !== "production") tool.output.parse(JSON.parse(answer.json));
  return { json: `{"result":{"content":[{"type":"text","text":${JSON.stringify(answer.json)}}],"structuredContent":${answer.json}},"jsonrpc":"2.0","id":${id}}` };
}

/**
 * A `tools/call` whose arguments are invalid, answered here for every tool and both ways a call
 * is answered, as a tool error naming each bad argument (CONTRACT §12) in the words /v1 uses for
 * the same input (lib/http/validation.ts: "limit: must be a whole number …", "id: is required").
 * First, text PostgreSQL cannot store: each tool's schema takes any string for an id, so the
 * text would otherwise reach a query, which PostgreSQL refuses (a NUL) or answers for another
 * string (an unpaired surrogate, stored as U+FFFD). Then what the tool's schema refuses, which
 * the SDK would answer in zod's own words. Null for a valid call and for a notification, which
 * no tool answers.
 */
/** How many of a call's problems its error names. */
const MAX_LISTED = 10;

function invalidCall(request: JSONRPCRequest | undefined, { tool, args, unstorable }: ToolCall): { json: string } | null {
  if (!request || (!unstorable.length && args.success)) return null;
  const prefix = `Input validation error: Invalid arguments for tool ${tool.name}: `;
  let text: string;
  // What the caller sent is named back only in part: at most ten problems, each cut to 200
  // characters (a 1 MB argument name, or 50,000 unknown ones, came back whole).
  const listed = (items: string[], sep: string) =>
    items.slice(0, MAX_LISTED).map((t) => printableExcerpt(t, 200)).join(sep) + (items.length > MAX_LISTED ? `${sep}and ${items.length - MAX_LISTED} more` : "");
  if (unstorable.length) {
    // An argument's name may itself be the bad text; it is named in printable characters.
    const names = unstorable.map((p) => (p || "arguments").replace(/[^\x20-\x7e]/g, "?"));
    text = `${prefix}${listed(names, ", ")} must be Unicode text without NUL characters.`;
  } else {
    const fields = validationError(args.error!, "arguments", { listed: Infinity }).errors ?? [];
    text = `${prefix}${listed(fields.map((f) => `${f.field}: ${f.detail}`), "; ")}.`;
  }
  return { json: JSON.stringify({ result: toolResult({ ok: false, text }), jsonrpc: "2.0", id: request.id }) };
}

/**
 * The request's JSON-RPC message, or the transport's refusal of a body that holds none, in
 * JSON-RPC's shape as the SDK's transport words it: a type other than JSON 415, and bytes that
 * are not JSON (none, not UTF-8, not parseable, cut short) 400 with -32700, Parse error
 * (JSON-RPC 2.0 §5.1). A body over the limit stays the service's 413 problem, as a rate limit's
 * 429 does.
 */
async function messageOf(req: Request): Promise<{ message: unknown } | Response> {
  try {
    return { message: await readJsonBody(req) };
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "invalid_request") throw err;
    if (mediaType(req.headers.get("content-type")) !== "application/json") {
      return transportError(415, -32000, "Unsupported Media Type: Content-Type must be application/json.", new Headers());
    }
    return transportError(400, -32700, `Parse error: ${err.message}`, new Headers());
  }
}

function withHeaders(res: Response, headers: Headers): Response {
  headers.forEach((v, k) => {
    if (!res.headers.has(k)) res.headers.set(k, v);
  });
  return res;
}

/**
 * A `tools/call` without its `task` member. This server declares no task capability, and "Receivers
 * that do not declare the task capability for a request type MUST process requests of that type
 * normally, ignoring any task-augmentation metadata if present" (MCP 2025-11-25, Tasks); the
 * SDK's server would refuse such a call with -32603 instead. Anything else as it came.
 */
function withoutTask(body: unknown): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const { method, params } = body as { method?: unknown; params?: unknown };
  if (method !== "tools/call" || typeof params !== "object" || params === null || !("task" in params)) return body;
  const { task: _ignored, ...rest } = params as Record<string, unknown>;
  return { ...body, params: rest };
}

/** A JSON-RPC error the transport answers before any message is read (id null), with HTTP `status`. */
function transportError(status: number, code: number, message: string, headers: Headers): Response {
  headers.set("Content-Type", "application/json");
  return knownLengthResponse(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }), { status, headers });
}

/**
 * The Streamable HTTP transport's Origin rule (MCP 2025-11-25, "Security Warning"): a request
 * from a web page of another origin is refused with 403, against DNS rebinding. A request with
 * no Origin (an assistant's server, a desktop client) or from this service's own pages passes.
 */
function originRefused(req: Request): boolean {
  const origin = req.headers.get("origin");
  return origin !== null && origin !== new URL(getEnv().baseUrl).origin;
}

/**
 * The message answered by the SDK: a new McpServer (the tools the token's scopes allow) and its
 * stateless transport, which also answers the headers it refuses.
 */
async function sdkAnswer(req: Request, body: unknown, ctx: Ctx, traceId: string, rl: RateLimitResult | undefined): Promise<Response> {
  const outage: { err?: unknown } = {};
  const server = serverFor(ctx, traceId, outage);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const answer = await transport.handleRequest(req, { parsedBody: body });
    if (outage.err) throw outage.err;
    const headers = baseHeaders(traceId, rl);
    answer.headers.forEach((v, k) => headers.set(k, v));
    // A JSON answer (enableJsonResponse) is whole: read here, it goes out with its length, and
    // a short one (initialize, a notification's error) is not gzipped (known-length.ts).
    if (answer.body && /^application\/json\b/i.test(answer.headers.get("content-type") ?? "")) {
      return knownLengthResponse(withoutErrorData(new Uint8Array(await answer.arrayBuffer()), answer.status, traceId), { status: answer.status, headers });
    }
    return new Response(answer.body, { status: answer.status, headers });
  } finally {
    await server.close();
  }
}

/**
 * The SDK's transport answers an exception in its handling with HTTP 4xx and `error.data` set to
 * the exception's text ("RangeError: Maximum call stack size exceeded"): logged under the trace
 * id, not sent.
 */
export function withoutErrorData(bytes: Uint8Array, status: number, traceId: string): Uint8Array {
  if (status < 400) return bytes;
  let answer: { error?: { data?: unknown } };
  try {
    answer = JSON.parse(new TextDecoder().decode(bytes)) as typeof answer;
  } catch {
    return bytes;
  }
  if (answer.error?.data === undefined) return bytes;
  log.warn("mcp transport error", { trace_id: traceId, data: printableExcerpt(String(answer.error.data), 500) });
  delete answer.error.data;
  return new TextEncoder().encode(JSON.stringify(answer));
}

/** POST /mcp. `direct: false` leaves every message to the SDK's server (tests compare the two). */
export async function handleMcpRequest(req: Request, { direct = true }: { direct?: boolean } = {}): Promise<Response> {
  const traceId = randomUUID();
  if (originRefused(req)) {
    dropRestAfterAnswer(req.body?.getReader());
    return transportError(403, -32000, "Forbidden: requests from web pages of other origins are refused (the Origin header).", baseHeaders(traceId));
  }
  let rl: RateLimitResult | undefined;
  // Counted while it is answered, so bulk work waits (lib/http/requests-first.ts).
  const answered = requestStarted();
  try {
    const db = await getDb();
    const identified = await identify(db, req, "mcp");
    rl = identified.rl;
    if (rl.exceeded) throw rateLimited(rl.exceeded);
    const { bearer } = identified;
    const actor = bearer.actor;
    if (actor.kind === "app") throw new ApiError("client_credentials_not_allowed", "A client-credentials token acts as the app itself and cannot read athlete data.");
    checkBilling(bearer);

    // The body still arriving is the client's time, not the thread's (requests-first.ts).
    const read = await answered.notWhile(() => messageOf(req));
    if (read instanceof Response) return withHeaders(read, baseHeaders(traceId, rl));
    const body = withoutTask(read.message);
    const ctx: Ctx = { db, actor, self: bearer.self };
    // Headers the transport refuses (Accept, Content-Type, an MCP-Protocol-Version it does not
    // support) are answered before anything in the message is looked at: "If the server
    // receives a request with an invalid or unsupported MCP-Protocol-Version, it MUST respond
    // with 400 Bad Request" (MCP 2025-11-25, Transports), whatever the message asks, an
    // `initialize` included.
    const refused = headersRefused(req);
    if (refused === "version") {
      const version = printableExcerpt(req.headers.get("mcp-protocol-version")!, 40);
      return transportError(400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`, baseHeaders(traceId, rl));
    }
    if (refused) return await sdkAnswer(req, body, ctx, traceId, rl);
    // One message per request, as revision 2025-11-25 has it (batches were dropped in
    // 2025-06-18): the SDK's transport would run a batch's calls together as one request,
    // counted once against the caller's limit (CONTRACT §10).
    if (Array.isArray(body)) {
      return transportError(400, -32600, "Invalid Request: send one JSON-RPC message per request; batches are not accepted (MCP 2025-11-25).", baseHeaders(traceId, rl));
    }
    // A response is accepted with 202 (MCP 2025-11-25, Transports) and matched to nothing: this
    // server is stateless and never sends a request. The SDK would look for its request and, not
    // finding one, write the whole response into an error message (a deeply nested one overflows
    // the stack, and its transport answered that as a Parse error carrying the exception's text).
    if (isResponseMessage(body) && JSONRPCMessageSchema.safeParse(body).success) return new Response(null, { status: 202, headers: baseHeaders(traceId, rl) });
    // A request with an id, as nearly every message is; a notification is the SDK's to answer.
    const parsed = JSONRPCRequestSchema.safeParse(body);
    const request = parsed.data;
    // JSON that is no JSON-RPC message at all (no method, `params` neither object nor array, …)
    // is an Invalid Request (JSON-RPC 2.0 §5.1, -32600); the SDK's transport would call it a
    // Parse error (-32700), which is for text that is not JSON. A request whose envelope is
    // right but whose params the SDK's schema refuses (a malformed `_meta`) is Invalid params
    // (-32602), answered with its id.
    if (!request && !JSONRPCMessageSchema.safeParse(body).success) {
      const id = envelopeId(body);
      if (id !== undefined && parsed.error) {
        // A member beside jsonrpc, id, method and params is the envelope's fault, not the params'.
        const extra = parsed.error.issues.find((i) => i.path.length === 0 && i.code === "unrecognized_keys");
        if (extra?.code === "unrecognized_keys") {
          const names = extra.keys.slice(0, 3).map((k: string) => JSON.stringify(k)).join(", ");
          return jsonRpcError(
            id,
            -32600,
            `Invalid Request: unknown member${extra.keys.length > 1 ? "s" : ""} ${names}; a JSON-RPC 2.0 request has only "jsonrpc", "id", "method" and "params".`,
            baseHeaders(traceId, rl),
          );
        }
        const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.map(String).join(".") || "params"}: ${i.message}`);
        return jsonRpcError(id, -32602, `Invalid params for ${(body as { method: string }).method}: ${issues.join("; ")}.`, baseHeaders(traceId, rl));
      }
      return transportError(
        400,
        -32600,
        'Invalid Request: the body is JSON but not a JSON-RPC 2.0 message ("jsonrpc": "2.0", a "method" string, "params" an object if sent, and an "id" for a request).',
        baseHeaders(traceId, rl),
      );
    }
    const malformed = request && malformedParams(request);
    if (malformed) return jsonRpcError(request.id, -32602, malformed, baseHeaders(traceId, rl));
    const toolCall = toolCallOf(body);
    // Looked for only when the call names no tool of this server's.
    const unknown = toolCall ? undefined : unknownTool(body);
    if (unknown) return jsonRpcError(unknown.id, -32602, `Unknown tool: ${unknown.name}. tools/list names the tools this token may call.`, baseHeaders(traceId, rl));
    // A notification is never answered, so it needs no scope: the SDK accepts it with 202.
    const lacking = request && toolCall && missingScopes(toolCall, actor);
    if (lacking) throw stepUp(actor, lacking.tool, lacking.missing);
    const invalid = toolCall && invalidCall(request, toolCall);
    if (invalid) {
      const headers = baseHeaders(traceId, rl);
      headers.set("Content-Type", "application/json");
      return knownLengthResponse(invalid.json, { status: 200, headers });
    }

    const called = direct ? await answerToolCall(body, toolCall, ctx, traceId) : null;
    if (called) {
      const headers = baseHeaders(traceId, rl);
      headers.set("Content-Type", "application/json");
      return knownLengthResponse(called.json, { status: 200, headers });
    }
    return await sdkAnswer(req, body, ctx, traceId, rl);
  } catch (err) {
    return errorToResponse(err, req, traceId, rl ?? rateLimitOf(err), "mcp");
  } finally {
    answered();
  }
}
