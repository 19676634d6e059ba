#!/usr/bin/env node
// One server process: Next.js's own request handler (the one `next start` runs) behind the
// node:http front server of scripts/front-server.mjs, so that the socket's peer address
// reaches the route handlers and what no route can serve is refused in the service's shapes.
//
//   node scripts/server.mjs [<app dir>] [-p PORT] [-H HOST] [--dev]
//
// Why not `next start`: Next.js fills `X-Forwarded-For` from the socket only when the request
// has none, so behind no proxy a client chooses its own address, and route handlers cannot
// learn the real one. Here every request gets PEER_ADDRESS_HEADER set to the socket's peer,
// overwriting whatever the client sent; lib/http/client-address.ts reads it, and believes
// `X-Forwarded-For` only through the proxies named in TRUSTED_PROXIES.
import net from "node:net";
import path from "node:path";
import { createRequire } from "node:module";
import { createFrontServer } from "./front-server.mjs";
import { stopWhenOutputGone } from "./output-gone.mjs";
import { defaultListenHost, isLoopbackHost } from "./listen-host.mjs";

function parseArgs(argv) {
  const out = { dir: process.cwd(), port: Number(process.env.PORT || 3000), hostname: undefined, dev: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-p" || a === "--port") out.port = Number(argv[++i]);
    else if (a === "-H" || a === "--hostname") out.hostname = argv[++i];
    else if (a === "--dev") out.dev = true;
    else if (!a.startsWith("-")) out.dir = path.resolve(a);
    else throw new Error(`unknown option ${a}`);
  }
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) throw new Error(`bad port ${out.port}`);
  return out;
}

const opts = parseArgs(process.argv.slice(2));
/** Where the app registers what it must stop before the process exits (instrumentation-node.ts). */
const SHUTDOWN = Symbol.for("athlete-activity-service.shutdown");
/**
 * How long a stop waits for requests in flight and the app's own shutdown, in all: less than the
 * launcher's STOP_BOUND_MS (scripts/serve.mjs, 10 s), which kills a server process still running then.
 */
const GRACE_MS = 8_000;
/** The part of GRACE_MS requests in flight may take; the app's shutdown has the rest. */
const DRAIN_MS = 5_000;
/** How long nothing must arrive before the app shuts down, once nothing is under way. */
const QUIET_MS = 100;
/** The front server, once made; until then there is nothing to close. */
let server;
let stopping = false;
/** Set once the app shuts down: a request arriving after that is answered 503 here, not handed to the app. */
let appStopped = false;
/** Answers begun and not yet finished (or cut off). */
const inFlight = new Set();
/** Requests begun, all told. */
let begun = 0;
let allAnswered;
/**
 * Stops gracefully, within GRACE_MS; a second signal stops at once.
 *
 * - No new connections, and every answer from now on (those under way whose headers have not
 *   gone yet too) says `Connection: close`: a client sends nothing more on that connection,
 *   which closes once its answer is out.
 * - A connection kept alive from before the stop is not closed under its client: closing one the
 *   server sees idle may cut off a request the client has just sent (it gets a reset, and cannot
 *   tell whether the request was carried out). It carries at most one more request, answered
 *   as above, or closes by the keep-alive timeout its client was told (`Keep-Alive: timeout=5`).
 *   So not server.close(), which destroys every connection idle at that instant.
 * - Once every answer under way is out and no request has come for QUIET_MS (at most DRAIN_MS), the app shuts down (its runners stop
 *   and record what they were doing, the database closes: the embedded one checkpoints its
 *   files); a request still arriving on a kept-alive connection meanwhile is answered 503.
 * - The process exits once the app has shut down and every connection has closed.
 */
const stop = async (code) => {
  if (stopping) process.exit(code);
  stopping = true;
  setTimeout(() => process.exit(code), GRACE_MS).unref();
  let closed;
  if (server) {
    for (const res of inFlight) if (!res.headersSent) res.setHeader("Connection", "close");
    closed = new Promise((resolve) => net.Server.prototype.close.call(server, () => resolve(undefined)));
    // Until nothing is under way and nothing new has come for QUIET_MS (a request a client had
    // sent as the stop began is served, not refused), at most DRAIN_MS.
    const deadline = Date.now() + DRAIN_MS;
    // Held, not unref'd: with nothing else open, the process would end here, before the app's shutdown.
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
    for (;;) {
      const seen = begun;
      if (inFlight.size > 0) await Promise.race([new Promise((resolve) => (allAnswered = resolve)), sleep(deadline - Date.now())]);
      await sleep(Math.min(QUIET_MS, deadline - Date.now()));
      if (Date.now() >= deadline || (begun === seen && inFlight.size === 0)) break;
    }
  }
  appStopped = true;
  try {
    await globalThis[SHUTDOWN]?.();
  } catch (err) {
    console.error("shutdown:", err);
  }
  await closed;
  process.exit(code);
};
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => void stop(0));
// Output nobody reads: stop with a failure, as Node.js itself would (scripts/output-gone.mjs).
stopWhenOutputGone(() => void stop(1));
if (!opts.dev) process.env.NODE_ENV = "production";
// Where it listens: `-H`, else HOST, else loopback only for a loopback BASE_URL
// (scripts/listen-host.mjs). Told to the app as HOST, whose private-network default (lib/env.ts)
// holds only for a server nobody else can reach, `-H 0.0.0.0` included.
const baseUrl = (process.env.BASE_URL || `http://localhost:${opts.port}`).replace(/\/+$/, "");
const listenHost = opts.hostname ?? (process.env.HOST || undefined) ?? defaultListenHost(baseUrl);
if (listenHost === undefined) delete process.env.HOST;
else process.env.HOST = listenHost;
// Whether the port is free is known before the app is prepared: preparing opens the database
// and starts the app's runners (webhook delivery, upload processing), which a second start on a
// port in use must never do beside the first (two processes on one embedded database). A listen
// that fails later all the same (another process took the port meanwhile) stops the process too.
const cannotListen = (err) => {
  const why = err.code === "EADDRINUSE" ? "it is in use (is the service already running?)" : err.message;
  console.error(`  Cannot listen on port ${opts.port}${listenHost ? ` of ${listenHost}` : ""}: ${why}`);
  process.exit(1);
};
if (opts.port !== 0) {
  await new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(opts.port, listenHost, () => probe.close(resolve));
  }).catch(cannotListen);
}
/**
 * A request that arrives once the app has shut down (on a connection kept alive from before the
 * stop): not served, and said so, in the service's 503 (CONTRACT §3 on the API's paths).
 */
function stoppedAnswer(req, res) {
  const detail = "The service is stopping: this request was not served. Send it again in a few seconds.";
  const api = /^\/(v1|mcp|api|oauth|\.well-known)(\/|$)/.test((req.url ?? "/").split("?")[0]);
  const body = api
    ? JSON.stringify({ type: `${baseUrl}/problems/service_unavailable`, title: "Service unavailable", status: 503, detail, code: "service_unavailable" })
    : `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Service unavailable</title></head><body><main><h1>The service is stopping</h1><p>${detail}</p></main></body></html>`;
  const type = api ? "application/problem+json" : "text/html; charset=utf-8";
  res.writeHead(503, { "Content-Type": type, "Cache-Control": "no-store", "Retry-After": "5", Connection: "close" }).end(body);
}

// Next.js from the app's own node_modules (the bench serves a second app with this script).
const next = createRequire(path.join(opts.dir, "package.json"))("next");
const app = (next.default ?? next)({ dev: opts.dev, dir: opts.dir, hostname: opts.hostname ?? "localhost", port: opts.port });
await app.prepare();
const handle = app.getRequestHandler();

server = createFrontServer({ baseUrl, handle: (req, res) => (appStopped ? stoppedAnswer(req, res) : handle(req, res)) });
// Before the front server's own listener: every request's answer is counted while under way,
// and told to close its connection once the stop has begun.
server.prependListener("request", (req, res) => {
  inFlight.add(res);
  begun++;
  if (stopping) res.setHeader("Connection", "close");
  res.once("close", () => {
    inFlight.delete(res);
    if (inFlight.size === 0) allAnswered?.();
  });
});
if (opts.dev) server.on("upgrade", (req, socket, head) => app.getUpgradeHandler()(req, socket, head));
server.once("error", cannotListen);
server.listen(opts.port, listenHost, () => {
  server.off("error", cannotListen);
  const where = server.address();
  const port = typeof where === "object" && where ? where.port : opts.port;
  const only = typeof where === "object" && where && isLoopbackHost(where.address) ? ` (${where.address} only)` : "";
  console.log(`  ▲ Ready on port ${port}${only}${opts.dev ? " (development)" : ""}`);
});
