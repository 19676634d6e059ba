import { randomUUID } from "node:crypto";
import { getEnv } from "../env";
import { baseHeaders } from "../http/api-route";
import { ApiError } from "../http/errors";
import { problemResponse } from "../http/problem";

/**
 * GET (a server-sent event stream) and DELETE (ending a session) mean nothing to a stateless
 * server: 405 with `Allow: POST`, as the Streamable HTTP transport lets a server answer.
 */
export function mcpMethodNotAllowed(req: Request): Response {
  const headers = baseHeaders(randomUUID());
  headers.set("Allow", "POST");
  return problemResponse(getEnv().baseUrl, new ApiError("method_not_allowed", `${req.method} is not served at /mcp: send each JSON-RPC message as a POST.`), { headers });
}
