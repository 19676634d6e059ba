import type http from "node:http";
export function refuseEarly(req: { method?: string; url?: string }, baseUrl: string): { status: number; type: string; body: string } | undefined;
export function createFrontServer(opts: {
  baseUrl: string | (() => string);
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => unknown;
}): http.Server;
