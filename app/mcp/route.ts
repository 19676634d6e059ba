// /mcp: the MCP server (CONTRACT §12), Streamable HTTP in stateless mode: POST only.
import { handleMcpRequest } from "@/lib/mcp/handler";
import { mcpMethodNotAllowed, mcpOptions } from "@/lib/mcp/method-not-allowed";

export const POST = (req: Request) => handleMcpRequest(req);
export const GET = mcpMethodNotAllowed;
export const DELETE = mcpMethodNotAllowed;
export const PUT = mcpMethodNotAllowed;
export const PATCH = mcpMethodNotAllowed;
export const OPTIONS = mcpOptions;
