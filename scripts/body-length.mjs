// The header a route's answer carries its body's length in, from the route handlers
// (lib/http/known-length.ts) to the front server (scripts/front-server.mjs). Next.js drops
// Content-Length from a route's Response, so without it every answer went out chunked and, to a
// client that accepts gzip, compressed whatever its size: the compression middleware's 1 KiB
// threshold only sees a length it is told. The front server turns it into Content-Length before
// the headers are sent, and never sends it on.
export const BODY_LENGTH_HEADER = "x-aas-body-length";
