import { getEnv } from "../env";
import { allowAnyOrigin, anyOriginAnswer, preflightFields } from "./cors";
import { ApiError } from "./errors";
import { databaseUnavailableError, isDatabaseUnavailable } from "./db-errors";
import { knownLengthJson } from "./known-length";
import { problemResponse } from "./problem";

const ALLOW = "GET, HEAD, OPTIONS";

/**
 * A route file's exports for a public JSON document every origin may read (discovery metadata,
 * the token-signing keys): GET (and HEAD, which Next.js answers from it) with `cacheControl`;
 * OPTIONS with `Allow`; and for any other method the 405 problem with `Allow` that SPEC §7 asks
 * of a path that does not serve a method (Next.js's own 405 has neither).
 */
export function publicDocument(cacheControl: string, document: () => unknown) {
  const GET = async () => {
    let body: unknown;
    try {
      body = await document();
    } catch (err) {
      // A document read from the database (the signing keys): while it cannot be reached, 503
      // with Retry-After, as /v1 and /oauth/token answer, not a bare 500.
      if (!isDatabaseUnavailable(err)) throw err;
      return anyOriginAnswer(problemResponse(getEnv().baseUrl, databaseUnavailableError(), { headers: { "Cache-Control": "no-store" } }));
    }
    return knownLengthJson(body, { headers: allowAnyOrigin(new Headers({ "Cache-Control": cacheControl })) });
  };
  const notAllowed = (req: Request) =>
    anyOriginAnswer(problemResponse(getEnv().baseUrl, new ApiError("method_not_allowed", `${req.method} is not served here; this path serves ${ALLOW}.`, { headers: { Allow: ALLOW } })));
  // A browser's preflight too: an MCP client in a page sends MCP-Protocol-Version with its GET.
  const OPTIONS = () => new Response(null, { status: 204, headers: allowAnyOrigin(new Headers({ Allow: ALLOW, ...preflightFields("GET, HEAD", "Authorization, MCP-Protocol-Version") })) });
  return { GET, OPTIONS, POST: notAllowed, PUT: notAllowed, PATCH: notAllowed, DELETE: notAllowed };
}
