// The header that carries a refusal the front server decided (scripts/front-server.mjs) for an
// API path to the catch-all route (app/v1/[[...path]]), which answers it as every `/v1` answer
// is answered: counted, and with the RateLimit headers. The front server always removes what a
// client sent under this name, so a client cannot choose it; lib/http/api-route.ts reads it.
export const REFUSED_HEADER = "x-aas-refused";
/** The path the front server hands such a request on to: one the catch-all route serves. */
export const REFUSED_PATH = "/v1/refused";
