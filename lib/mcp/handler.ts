import "server-only";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Actor, Ctx } from "../auth/actor";
import { hasScope } from "../auth/require-scope";
import { SCOPE_NAMES, type Scope } from "../auth/scopes";
import { getDb } from "../db/client";
import { getEnv } from "../env";
import { baseHeaders, checkBilling, errorToResponse, identify, rateLimited, rateLimitOf } from "../http/api-route";
import { readJsonBody } from "../http/body";
import { requestStarted } from "../http/requests-first";
import { ApiError } from "../http/errors";
import type { RateLimitResult } from "../http/rate-limit";
import { errorText, log } from "../log";
import { resourceMetadataUrl } from "../oauth/resources";
import { MCP_TOOLS, type McpTool } from "./tools";

// POST /mcp: the MCP server (CONTRACT §12), Streamable HTTP, stateless: every request stands
// alone, so a new server and transport answer each one (no Mcp-Session-Id, no initialize
// needed first). Around the SDK, the same gates as /v1 in the same order: a token for /mcp,
// its rate-limit window, the subscription, and the scopes; the tools then call the /v1 verbs.

const SERVER_INFO = { name: "athlete-activity-service", title: "Athlete Activity Service", version: "1.0.0" };

const INSTRUCTIONS =
  "Training data of one athlete (and, for a coach, of the athletes they coach): activities with their totals, samples (streams) and laps, body metrics, and weekly or monthly volume. All values are SI units (metres, seconds, metres per second, heart rate in beats per second: multiply by 60 for beats per minute). Dates are local to the athlete's timezone (get_profile tells it).";

/** The scopes a JSON-RPC message needs beyond what the token has: only `tools/call` of a known tool needs any. */
function missingScopes(message: unknown, actor: Actor): { tool: McpTool; missing: Scope[] } | undefined {
  const m = message as { method?: unknown; params?: { name?: unknown; arguments?: unknown } } | null;
  if (m?.method !== "tools/call") return undefined;
  const tool = MCP_TOOLS.find((t) => t.name === m.params?.name);
  if (!tool) return undefined;
  const args = tool.input.safeParse(m.params?.arguments ?? {});
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

function toolResult(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };
}

function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

/** A server with the tools the token's scopes allow: `tools/list` shows only those. */
function serverFor(ctx: Ctx, traceId: string): McpServer {
  const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS });
  for (const tool of MCP_TOOLS) {
    if (!hasScope(ctx.actor, tool.scope)) continue;
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, outputSchema: tool.output, annotations: { readOnlyHint: true, openWorldHint: false } },
      async (args: Record<string, unknown>) => {
        try {
          return toolResult(await tool.run(ctx, args));
        } catch (err) {
          // What /v1 answers with a problem (not found, not reachable, a bad range) is the tool's error, in the same words.
          if (err instanceof ApiError && err.status < 500) return toolError(err.message);
          log.error("mcp tool failed", { trace_id: traceId, tool: tool.name, error: errorText(err) });
          return toolError(`The service failed. Quote trace id ${traceId} when reporting it.`);
        }
      },
    );
  }
  return server;
}

export async function handleMcpRequest(req: Request): Promise<Response> {
  const traceId = randomUUID();
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

    const body = await readJsonBody(req);
    for (const message of Array.isArray(body) ? body : [body]) {
      const lacking = missingScopes(message, actor);
      if (lacking) throw stepUp(actor, lacking.tool, lacking.missing);
    }

    const server = serverFor({ db, actor, self: bearer.self }, traceId);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const answer = await transport.handleRequest(req, { parsedBody: body });
      const headers = baseHeaders(traceId, rl);
      answer.headers.forEach((v, k) => headers.set(k, v));
      return new Response(answer.body, { status: answer.status, headers });
    } finally {
      await server.close();
    }
  } catch (err) {
    return errorToResponse(err, req, traceId, rl ?? rateLimitOf(err), "mcp");
  } finally {
    answered();
  }
}
