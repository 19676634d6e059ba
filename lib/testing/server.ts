import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { resetEnvForTests } from "../env";
import { createFrontServer } from "../../scripts/front-server.mjs";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string | string[]>> }) => Promise<Response>;
type Segment =
  | { kind: "static"; value: string }
  | { kind: "dynamic"; name: string }
  | { kind: "catchall"; name: string; optional: boolean };
type RouteFile = { file: string; segments: Segment[] };

const APP = path.resolve(__dirname, "../../app");

function findRoutes(dir: string, segments: Segment[] = []): RouteFile[] {
  const out: RouteFile[] = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) {
      // Route groups `(name)` add no segment.
      if (/^\(.*\)$/.test(entry)) out.push(...findRoutes(full, segments));
      else if (/^\[\[\.\.\.(\w+)\]\]$/.test(entry))
        out.push(...findRoutes(full, [...segments, { kind: "catchall", name: entry.slice(5, -2), optional: true }]));
      else if (/^\[\.\.\.(\w+)\]$/.test(entry))
        out.push(...findRoutes(full, [...segments, { kind: "catchall", name: entry.slice(4, -1), optional: false }]));
      else if (/^\[(\w+)\]$/.test(entry)) out.push(...findRoutes(full, [...segments, { kind: "dynamic", name: entry.slice(1, -1) }]));
      else out.push(...findRoutes(full, [...segments, { kind: "static", value: entry }]));
    } else if (entry === "route.ts") {
      out.push({ file: full, segments });
    }
  }
  return out;
}

const RANK = { static: 0, dynamic: 1, catchall: 2 } as const;
function specificity(a: RouteFile, b: RouteFile): number {
  for (let i = 0; i < Math.max(a.segments.length, b.segments.length); i++) {
    const x = a.segments[i];
    const y = b.segments[i];
    if (!x || !y) return x ? -1 : 1;
    if (RANK[x.kind] !== RANK[y.kind]) return RANK[x.kind] - RANK[y.kind];
  }
  return 0;
}

function match(route: RouteFile, parts: string[]): Record<string, string | string[]> | null {
  const params: Record<string, string | string[]> = {};
  for (let i = 0; i < route.segments.length; i++) {
    const seg = route.segments[i]!;
    if (seg.kind === "catchall") {
      if (i >= parts.length && !seg.optional) return null;
      if (i < parts.length) params[seg.name] = parts.slice(i);
      return params;
    }
    const part = parts[i];
    if (part === undefined) return null;
    if (seg.kind === "static" && seg.value !== part) return null;
    if (seg.kind === "dynamic") params[seg.name] = part;
  }
  return parts.length === route.segments.length ? params : null;
}

/** The headers of a route's Response that Next.js does not send on (send-response.js FORBIDDEN_HEADERS). */
const NEXT_DROPS = new Set(["content-length", "content-encoding", "transfer-encoding"]);

export type TestServer = { url: string; close: () => Promise<void> };

/**
 * Serves the App Router's route handlers over real HTTP, routed the way Next.js routes them
 * (static, then dynamic, then catch-all segments). Pages are not served: journeys cover them.
 */
export async function startTestServer(): Promise<TestServer> {
  const routes = findRoutes(APP).sort(specificity);
  const modules = new Map<string, Record<string, Handler | undefined>>();
  let origin = "";
  // The same front server as production (scripts/front-server.mjs): early refusals, peer address.
  const server = createFrontServer({ baseUrl: () => origin, handle: async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
      // As Next.js does (trailingSlash: false): a path that ends in a slash is redirected to the
      // one without it, before any route.
      if (url.pathname.length > 1 && url.pathname.endsWith("/")) {
        res.writeHead(308, { location: url.pathname.replace(/\/+$/, "") + url.search }).end();
        return;
      }
      const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
      let found: { route: RouteFile; params: Record<string, string | string[]> } | undefined;
      for (const route of routes) {
        const params = match(route, parts);
        if (params) {
          found = { route, params };
          break;
        }
      }
      if (!found) {
        res.writeHead(404, { "content-type": "text/plain" }).end("no route");
        return;
      }
      let mod = modules.get(found.route.file);
      if (!mod) {
        mod = (await import(found.route.file)) as Record<string, Handler | undefined>;
        modules.set(found.route.file, mod);
      }
      const method = req.method ?? "GET";
      const handler = mod[method] ?? (method === "HEAD" ? mod.GET : undefined);
      if (!handler) {
        res.writeHead(405).end();
        return;
      }
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
        else if (v !== undefined) headers.set(k, v);
      }
      const hasBody = method !== "GET" && method !== "HEAD";
      const request = new Request(url, {
        method,
        headers,
        // The Node request itself, as Next.js gives it (NextRequestAdapter.fromNodeNextRequest):
        // fetch's Request reads it as an async iterable, and cancelling that body destroys the
        // connection there as here.
        body: hasBody ? (req as unknown as BodyInit) : undefined,
        // @ts-expect-error Node's fetch needs this for streamed bodies
        duplex: "half",
      });
      const response = await handler(request, { params: Promise.resolve(found.params) });
      // As Next.js sends a route's Response (next/dist/server/send-response.js): its headers set
      // one by one, less the framing ones it drops, so the front server sees what it sees there.
      response.headers.forEach((v, k) => {
        if (NEXT_DROPS.has(k)) return;
        res.setHeader(k, k === "set-cookie" ? response.headers.getSetCookie() : v);
      });
      res.statusCode = response.status;
      if (method === "HEAD" || !response.body) {
        res.end();
        return;
      }
      // And its body as pipeToNodeResponse sends it: the headers flushed before the first chunk,
      // each chunk written as it comes, so an answer of untold length goes out chunked as there.
      let started = false;
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        if (!started) res.flushHeaders();
        started = true;
        if (!res.write(chunk)) await new Promise((r) => res.once("drain", r).once("close", r));
      }
      res.end();
    } catch (err) {
      // A body that failed after its headers went cannot become a 500: the client sees it cut.
      if (res.headersSent) res.destroy(err instanceof Error ? err : new Error(String(err)));
      else res.writeHead(500, { "content-type": "text/plain" }).end(`test server: ${String(err)}`);
    }
  } });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  process.env.BASE_URL = origin;
  resetEnvForTests();
  return {
    url: origin,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
