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
import path from "node:path";
import { createRequire } from "node:module";
import { createFrontServer } from "./front-server.mjs";
import { stopWhenOutputGone } from "./output-gone.mjs";

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
/** The front server, once made; until then there is nothing to close. */
let server;
const stop = (code) => {
  server?.close();
  process.exit(code);
};
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => stop(0));
// Output nobody reads: stop with a failure, as Node.js itself would (scripts/output-gone.mjs).
stopWhenOutputGone(() => stop(1));
if (!opts.dev) process.env.NODE_ENV = "production";
// Next.js from the app's own node_modules (the bench serves a second app with this script).
const next = createRequire(path.join(opts.dir, "package.json"))("next");
const app = (next.default ?? next)({ dev: opts.dev, dir: opts.dir, hostname: opts.hostname ?? "localhost", port: opts.port });
await app.prepare();
const handle = app.getRequestHandler();

const baseUrl = (process.env.BASE_URL || `http://localhost:${opts.port}`).replace(/\/+$/, "");
server = createFrontServer({ baseUrl, handle: (req, res) => handle(req, res) });
if (opts.dev) server.on("upgrade", (req, socket, head) => app.getUpgradeHandler()(req, socket, head));
server.listen(opts.port, opts.hostname, () => {
  const where = server.address();
  console.log(`  ▲ Ready on port ${typeof where === "object" && where ? where.port : opts.port}${opts.dev ? " (development)" : ""}`);
});
