import { randomUUID } from "node:crypto";
import { getEnv } from "../env";
import { baseHeaders } from "../http/api-route";
import { ApiError } from "../http/errors";
import { problemResponse } from "../http/problem";

/** What /mcp serves: every message is a POST. */
const ALLOW = "POST, OPTIONS";

/**
 * OPTIONS: 204 naming the same methods as the 405s do (Next.js's own answer listed every method
 * the route file exports, the refused ones too). No CORS headers: web pages of other origins
 * are refused at /mcp (the Origin rule in handler.ts).
 */
export function mcpOptions(): Response {
  const headers = baseHeaders(randomUUID());
  headers.set("Allow", ALLOW);
  return new Response(null, { status: 204, headers });
}

/**
 * GET (a server-sent event stream) and DELETE (ending a session) mean nothing to a stateless
 * server: 405 with `Allow: POST, OPTIONS`, as the Streamable HTTP transport lets a server answer.
 */
export function mcpMethodNotAllowed(req: Request): Response {
  const headers = baseHeaders(randomUUID());
  headers.set("Allow", ALLOW);
  return problemResponse(getEnv().baseUrl, new ApiError("method_not_allowed", `${req.method} is not served at /mcp: send each JSON-RPC message as a POST.`), { headers });
}
