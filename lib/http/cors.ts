/**
 * Cross-origin reads for browser apps. SPEC §4.5 names browser apps beside native ones: a
 * single-page app signs the athlete in with PKCE and then calls `/oauth/token` and `/v1` from its
 * own origin with `fetch`. Without these headers the browser withholds every answer from it.
 * Any origin may: these endpoints read no cookie (a bearer token or the client's own
 * credentials in the request authorize it), so an answer is nothing a page could not get by
 * asking with those same credentials itself. The console's routes (cookies) and `/mcp` (which
 * refuses other origins, MCP 2025-11-25) get none of this.
 */

/** Answer headers a script may read besides the CORS-safelisted ones. */
const EXPOSED = [
  "Location",
  "Request-Id",
  "RateLimit",
  "RateLimit-Policy",
  "Retry-After",
  "WWW-Authenticate",
  "Idempotent-Replayed",
  "Content-Disposition",
].join(", ");

/** Adds the cross-origin headers to an answer's headers. */
export function allowAnyOrigin(headers: Headers): Headers {
  headers.set("Access-Control-Allow-Origin", "*");
  headers.set("Access-Control-Expose-Headers", EXPOSED);
  return headers;
}

/** Adds the cross-origin headers to an answer already made. */
export function anyOriginAnswer(res: Response): Response {
  allowAnyOrigin(res.headers);
  return res;
}

/** What a preflight (OPTIONS) answer adds to the cross-origin headers: the methods and request headers a browser may send, for two hours. */
export function preflightFields(methods: string, requestHeaders: string): Record<string, string> {
  return { "Access-Control-Allow-Methods": methods, "Access-Control-Allow-Headers": requestHeaders, "Access-Control-Max-Age": "7200" };
}

/** A route handler whose every answer carries the cross-origin headers. */
export function forAnyOrigin<A extends unknown[]>(handler: (req: Request, ...rest: A) => Promise<Response>) {
  return async (req: Request, ...rest: A): Promise<Response> => anyOriginAnswer(await handler(req, ...rest));
}

/** The OPTIONS handler of an endpoint that takes `methods` from browser apps. */
export function preflight(methods: string, requestHeaders: string) {
  return async (): Promise<Response> =>
    new Response(null, { status: 204, headers: allowAnyOrigin(new Headers({ Allow: `${methods}, OPTIONS`, ...preflightFields(methods, requestHeaders) })) });
}
