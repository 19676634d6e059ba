// The node:http server in front of the service's request handler: what every request passes
// before Next.js (or, in tests, the test router) sees it. scripts/server.mjs serves Next.js's
// handler through it; lib/testing/server.ts serves the route files through the same one.
//
// - The socket's peer address goes into PEER_ADDRESS_HEADER, overwriting whatever the client
//   sent there (lib/http/client-address.ts reads it).
// - What no route can serve is refused here in the service's own shapes: methods no route
//   serves (TRACE, CONNECT, PROPFIND …; Next.js's Request cannot even represent TRACE), paths
//   whose %-escapes are not UTF-8, and requests node:http cannot parse (it would answer a bare
//   400 or 431, or, for CONNECT, nothing at all).
// - A form or server action posted to a page from another origin is refused here (403), by
//   Next.js's own rule; Next.js refused it by throwing, a 500. So is a page POST over Next.js's
//   action limit (413) or of no declared length (411), which Next.js threw on too.
import http from "node:http";
import { BODY_LENGTH_HEADER } from "./body-length.mjs";
import { PAGE_BODY_LIMIT_BYTES } from "./page-body-limit.mjs";
import { PEER_ADDRESS_HEADER } from "./peer-address.mjs";
import { REFUSED_HEADER, REFUSED_PATH } from "./refused-header.mjs";

const TITLES = { invalid_request: "Invalid request", method_not_allowed: "Method not allowed", not_found: "Not found" };

const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A refusal in the shape its path answers in: an RFC 6749 error on the OAuth endpoints, a page
 * on the authorization endpoint and the console's pages (they answer people), an RFC 9457
 * problem (CONTRACT §3) on the API's paths.
 */
function refusal(baseUrl, rawPath, status, code, detail) {
  const path = resolvedPath(rawPath);
  // An API path's refusal is answered by the catch-all route, as every `/v1` answer is.
  const handOn = /^\/v1(\/|$)/.test(path) ? { code, detail } : undefined;
  if (/^\/oauth\/(token|revoke|register)(\/|$)/.test(path)) {
    return { status, type: "application/json", body: JSON.stringify({ error: "invalid_request", error_description: detail }) };
  }
  if (/^\/oauth\/authorize(\/|$)/.test(path)) {
    const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${TITLES[code]}</title></head><body><main><h1>This authorization link cannot be used</h1><p>${escapeHtml(detail)}</p></main></body></html>`;
    return { status, type: "text/html; charset=utf-8", body: page };
  }
  // A console page's address (a link pasted cut short, say) is opened by a person: a page too.
  if (!/^\/(v1|api|mcp|oauth|\.well-known|_next)(\/|$)/.test(path)) {
    const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${TITLES[code]} · Athlete Activity Service</title></head><body><main><h1>This address cannot be opened</h1><p>${escapeHtml(detail)}</p><p><a href="/activities">Go to your activities</a></p></main></body></html>`;
    return { status, type: "text/html; charset=utf-8", body: page };
  }
  const body = { type: `${baseUrl}/problems/${code}`, title: TITLES[code], status, detail, code };
  return { status, type: "application/problem+json", body: JSON.stringify(body), handOn };
}

/** The path a target names once dot segments are resolved (`/v1/%2e%2e/oauth/token` is `/oauth/token`). */
function resolvedPath(path) {
  try {
    return new URL(path || "/", "http://x").pathname;
  } catch {
    return path;
  }
}

/**
 * A request whose target is a whole URL (`GET http://host/v1/athletes/me`, the absolute form a
 * server must accept, RFC 9112 §3.2.2) as the path and query every rule here reads, with the
 * URL's authority as `Host` (which the RFC says replaces the header). Read as it came, its
 * `http://` made an empty path segment: a 404 for a path that exists.
 */
export function originForm(req) {
  const target = req.url ?? "/";
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return;
  const url = URL.parse(target);
  if (!url || !/^https?:$/.test(url.protocol)) return;
  req.url = url.pathname + url.search;
  if (url.host) req.headers.host = url.host;
}

/** The methods any route serves; every other one (TRACE, CONNECT, PROPFIND …) is refused here. */
const SERVED_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const ALLOW = [...SERVED_METHODS].join(", ");

/** The refusal for a request no route may see, or undefined. */
export function refuseEarly(req, baseUrl) {
  const path = (req.url ?? "/").split("?")[0];
  if (!SERVED_METHODS.has(req.method)) return refusal(baseUrl, path, 405, "method_not_allowed", `${req.method} is not served.`);
  try {
    decodeURIComponent(path);
  } catch {
    return refusal(baseUrl, path, 400, "invalid_request", "The path holds %-escapes that are not UTF-8.");
  }
  // An empty segment in an API path is an id left out (`/v1/teams//members` from an unset
  // variable): no resource has it. Next.js would answer a 308 to the path without it, which
  // names another resource, so a client would follow it to an answer it never asked for.
  if (/^\/(v1|mcp)(\/|$)/.test(resolvedPath(path)) && /\/\/+(?=.)/.test(path)) {
    return refusal(baseUrl, path, 404, "not_found", "The path has an empty segment: an id is missing.");
  }
  // Node.js keeps the first of several Authorization headers and drops the rest, so which
  // credential a request was served with would depend on their order. A request that carries
  // more than one credential is malformed (RFC 6750 §3.1 `invalid_request`; RFC 9110 §5.3 allows
  // no list in this field).
  if (ROUTE_PATHS.test(resolvedPath(path)) && repeated(req.rawHeaders, "authorization")) {
    return refusal(baseUrl, path, 400, "invalid_request", "The request has more than one Authorization header: send one credential.");
  }
  return undefined;
}

/** Whether a header appears more than once among a request's raw headers (name, value, name, value…). */
function repeated(rawHeaders, name) {
  let seen = 0;
  for (let i = 0; i < (rawHeaders?.length ?? 0); i += 2) if (rawHeaders[i].toLowerCase() === name && ++seen > 1) return true;
  return false;
}

/**
 * An API path with a trailing slash (`/v1/athletes/me/`, from a base URL joined with a slash) is
 * served as the path without it. Next.js would answer a 308 of its own, outside every route, so
 * without the `RateLimit` headers every `/v1` answer carries (CONTRACT §10) and uncounted. Pages
 * keep Next.js's redirect: a browser follows it, and a page's links are relative to its path.
 */
export function withoutTrailingSlash(url) {
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  if (path.length < 2 || !path.endsWith("/") || !/^\/(v1|mcp)(\/|$)/.test(resolvedPath(path))) return url;
  const trimmed = path.replace(/\/+$/, "");
  return (trimmed || "/") + (q === -1 ? "" : url.slice(q));
}

/** Paths whose routes answer a method no route serves themselves, with the path's own `Allow` (route() in lib/http/api-route.ts). */
const OWN_405_PATHS = /^\/(v1|api\/console)(\/|$)/;

/** Paths answered by route handlers, where a cross-origin POST is the API's business (CORS, its own checks). */
const ROUTE_PATHS = /^\/(v1|mcp|api)(\/|$)|^\/oauth\/(token|revoke|register)(\/|$)/;

/**
 * A form or server action posted to a page from another origin: refused here with a 403 page.
 * Next.js refuses it too (its CSRF check in app-render/action-handler.js: the Origin's host must
 * be the first `X-Forwarded-Host`, or else `Host`), but by throwing, so a cross-site form
 * (multipart, as server actions post without script) and a forged `Next-Action` call got a 500
 * and a logged error; an Origin that is not a URL threw a TypeError out of the check. The same
 * rule, so nothing Next.js would run is refused: a request without an Origin goes on (Next.js
 * lets it through: no browser sends a cross-site POST without one), `Origin: null` is the host
 * "null".
 */
export function foreignPagePost(req) {
  if (req.method !== "POST") return false;
  const type = req.headers["content-type"] ?? "";
  if (req.headers["next-action"] === undefined && !/^multipart\/form-data/i.test(type)) return false;
  const origin = req.headers.origin;
  if (typeof origin !== "string" || ROUTE_PATHS.test(resolvedPath((req.url ?? "/").split("?")[0]))) return false;
  let originHost;
  try {
    originHost = origin === "null" ? "null" : new URL(origin).host;
  } catch {
    return true;
  }
  const forwarded = req.headers["x-forwarded-host"];
  const host = (Array.isArray(forwarded) ? forwarded[0] : forwarded?.split(",")[0]?.trim()) || req.headers.host;
  return originHost !== host;
}

/**
 * A POST to a page whose body Next.js would not take: more than PAGE_BODY_LIMIT_BYTES declared
 * (Next.js throws "Body exceeded 64kb limit" from the action handler: a 500 and a logged stack,
 * for anyone who sends a large form), or a body of no declared length (chunked), which browsers
 * never send for a form or an action and whose size would only be found out as it is read.
 * Refused here with a page: 413 or 411. The API's own paths judge their bodies themselves.
 */
export function pagePostRefusal(req) {
  if (req.method !== "POST" || ROUTE_PATHS.test(resolvedPath((req.url ?? "/").split("?")[0]))) return undefined;
  const length = req.headers["content-length"];
  if (length === undefined) {
    if (req.headers["transfer-encoding"] === undefined) return undefined;
    return { status: 411, page: pageOf("This form could not be sent", "The request did not say how long its body is. Open the page and send the form from there.") };
  }
  if (Number(length) > PAGE_BODY_LIMIT_BYTES) {
    return { status: 413, page: pageOf("This form is too large", `A form sent to this service may carry at most ${PAGE_BODY_LIMIT_BYTES / 1024} KiB. Nothing was changed.`) };
  }
  return undefined;
}

/** How much of a refused page POST's body is still read and dropped, and for how long (as lib/http/body.ts's dropRestAfterAnswer). */
const REFUSED_BODY_DROP_BYTES = 8 * 1024 * 1024;
const REFUSED_BODY_LINGER_MS = 2_000;

/**
 * A refusal of a request whose body will not be used, answered so that it reaches the client: a
 * lingering close, as lib/http/body.ts's `dropRestAfterAnswer` makes one for the routes. The
 * answer goes out at once and the rest of the body is read and dropped meanwhile, so a browser
 * still sending its form reads the page instead of a reset, and the connection takes the next
 * request. Past REFUSED_BODY_DROP_BYTES more, or a body unfinished REFUSED_BODY_LINGER_MS later,
 * the connection is closed (the answer has long gone).
 */
function refuseBody(req, res, status, page) {
  let dropped = 0;
  const linger = setTimeout(() => req.socket.destroy(), REFUSED_BODY_LINGER_MS);
  linger.unref();
  req.on("data", (chunk) => {
    dropped += chunk.length;
    if (dropped > REFUSED_BODY_DROP_BYTES) req.socket.destroy();
  });
  req.on("end", () => clearTimeout(linger));
  req.on("close", () => clearTimeout(linger));
  res.writeHead(status, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "X-Frame-Options": "DENY" }).end(page);
}

const pageOf = (title, text) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>`;

const FOREIGN_POST_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Refused</title></head><body><main><h1>This form was sent from another site</h1><p>Nothing was changed. Open the page on this service and send the form from there.</p></main></body></html>`;

/** A whole HTTP/1.1 answer for a socket that has no ServerResponse (CONNECT, parse errors). */
function rawAnswer(r, reason, extra = "") {
  return `HTTP/1.1 ${r.status} ${reason}\r\n${extra}Content-Type: ${r.type}\r\nContent-Length: ${Buffer.byteLength(r.body)}\r\nConnection: close\r\n\r\n${r.body}`;
}

/**
 * Next.js sends a route's status line and headers (`flushHeaders`) just before its first body
 * chunk, so every answer took two writes to the socket, each a system call. Corked until the
 * end of the tick, the headers leave with the body (and, for a one-chunk answer, its end) in
 * one. A stream's later chunks are not held: only the tick that flushes the headers is.
 */
class OneWriteResponse extends http.ServerResponse {
  flushHeaders() {
    // Before the headers go: Next.js's compression decides when they do (below).
    takeBodyLength(this, this.statusCode);
    // The socket's cork, not the response's: a corked response holds its body chunks back
    // but not the end of a chunked body, which would then go out before them.
    const socket = this.socket;
    socket?.cork();
    super.flushHeaders();
    if (socket) process.nextTick(uncork, socket);
  }

  writeHead(statusCode, ...rest) {
    // An answer that is ended without flushHeaders (an empty body, HEAD) still drops the header.
    takeBodyLength(this, statusCode);
    return super.writeHead(statusCode, ...rest);
  }
}

/**
 * A route's answer tells its body's length in BODY_LENGTH_HEADER (scripts/body-length.mjs):
 * Next.js drops a route's Content-Length, and its compression middleware (which wraps this
 * response's writeHead and decides there) gzips any answer whose length it is not told, so a
 * 214-byte answer was gzipped for every client that accepts it. Told here as Content-Length, an
 * answer under the middleware's 1 KiB threshold goes out as it is; a larger one is still
 * compressed, and the middleware then removes the length itself. The header itself never leaves.
 */
function takeBodyLength(res, statusCode) {
  const told = res.getHeader(BODY_LENGTH_HEADER);
  if (told === undefined) return;
  res.removeHeader(BODY_LENGTH_HEADER);
  // Compressed (the middleware decided first), already given, or an answer that has no body.
  if (res.getHeader("content-encoding") !== undefined || res.getHeader("content-length") !== undefined) return;
  if (statusCode === 204 || statusCode === 304 || statusCode < 200) return;
  if (typeof told === "string" && /^\d{1,15}$/.test(told)) res.setHeader("Content-Length", told);
}

function uncork(socket) {
  socket.uncork();
}

/**
 * A node:http server that hands each request it accepts to `handle(req, res)` (which may return
 * a promise; a rejection is a plain 500, logged).
 */
export function createFrontServer({ baseUrl: base, handle }) {
  // A function when the address is known only once the server listens (the test server).
  const baseUrl = () => (typeof base === "function" ? base() : base);
  // The request each connection is on, so a parse error in its body is answered in its path's
  // shape, and not at all once its answer has begun.
  const current = new WeakMap();
  const server = http.createServer({ ServerResponse: OneWriteResponse }, (req, res) => {
    originForm(req);
    current.set(req.socket, { path: (req.url ?? "/").split("?")[0], res });
    // Every answer, this server's refusals included: served over https (the base URL says so,
    // behind a proxy that ends TLS or not), browsers are told to use nothing else for a year
    // (RFC 6797), so a later http:// link or a downgrade on the network cannot carry the
    // session cookie's page in the clear.
    if (baseUrl().startsWith("https://")) res.setHeader("Strict-Transport-Security", "max-age=31536000");
    // The authorization endpoint is a page, which Next.js answers OPTIONS for with a bare 400.
    if (req.method === "OPTIONS" && resolvedPath((req.url ?? "/").split("?")[0]) === "/oauth/authorize") {
      res.writeHead(204, { Allow: "GET, HEAD, POST, OPTIONS", "Cache-Control": "no-store" }).end();
      return;
    }
    if (req.headers[REFUSED_HEADER] !== undefined) delete req.headers[REFUSED_HEADER];
    let refused = refuseEarly(req, baseUrl());
    // A method no route serves (PROPFIND, TRACE …) on an API path the routes may see: the path's
    // own route answers the 405 (on /v1 counted, with the RateLimit headers) with its own `Allow`
    // (route() in lib/http/api-route.ts). Next.js routes only the methods it knows, so the
    // request reaches the route as OPTIONS, with the refusal (and the method sent) beside it.
    if (refused?.status === 405 && OWN_405_PATHS.test(resolvedPath((req.url ?? "/").split("?")[0]))) {
      const method = req.method;
      req.method = "OPTIONS";
      // A path no route may see as it is (an empty segment …): the catch-all's refusal of the path.
      refused = refuseEarly(req, baseUrl());
      if (!refused) req.headers[REFUSED_HEADER] = JSON.stringify({ code: "method_not_allowed", detail: `${method} is not served.`, method });
    }
    // Any other refusal on an API path: the catch-all route answers it, counted and with the
    // RateLimit headers every `/v1` answer carries (CONTRACT §10).
    if (refused?.handOn) {
      req.headers[REFUSED_HEADER] = JSON.stringify(refused.handOn);
      req.url = REFUSED_PATH;
    } else if (refused) {
      const headers = { "Content-Type": refused.type, "Cache-Control": "no-store" };
      if (refused.status === 405) headers.Allow = ALLOW;
      res.writeHead(refused.status, headers).end(refused.body);
      return;
    }
    if (foreignPagePost(req)) {
      refuseBody(req, res, 403, FOREIGN_POST_PAGE);
      return;
    }
    const tooLarge = pagePostRefusal(req);
    if (tooLarge) {
      refuseBody(req, res, tooLarge.status, tooLarge.page);
      return;
    }
    req.headers[PEER_ADDRESS_HEADER] = req.socket.remoteAddress ?? "";
    req.url = withoutTrailingSlash(req.url ?? "/");
    Promise.resolve(handle(req, res)).catch((err) => {
      console.error(err);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end("Internal Server Error");
    });
  });
  // CONNECT arrives as its own event; with no listener node:http drops the connection unanswered.
  server.on("connect", (req, socket) => {
    socket.on("error", () => socket.destroy());
    socket.end(rawAnswer(refuseEarly(req, baseUrl()), "Method Not Allowed", `Allow: ${ALLOW}\r\n`));
  });
  server.on("clientError", (err, socket) => {
    const on = current.get(socket);
    if (!socket.writable || err.code === "ECONNRESET" || on?.res.headersSent) return socket.destroy();
    const large = err.code === "HPE_HEADER_OVERFLOW";
    // A request that failed in its headers has no request object yet: its line is in the raw bytes.
    const line = /^[A-Za-z]+ (\/[^ ?]*)/.exec(err.rawPacket?.toString("latin1") ?? "");
    const r = refusal(baseUrl(), on?.path ?? line?.[1] ?? "", 400, "invalid_request", large ? "The request's headers are larger than 16 KB." : "The request is not well-formed HTTP.");
    socket.end(rawAnswer(r, "Bad Request"));
  });
  return server;
}
