import { NextResponse, type NextRequest } from "next/server";
import { newNonce, pageCsp } from "@/lib/http/page-csp";

/**
 * Every page answer gets a nonce of its own and the Content-Security-Policy naming it
 * (lib/http/page-csp.ts). Next.js reads the nonce from the request's policy and puts it on the
 * scripts it writes into the page. The API, OAuth's JSON endpoints, discovery, /mcp and static
 * files are not matched: they answer no HTML (next.config.ts's headers still forbid framing
 * everywhere).
 */
export function proxy(request: NextRequest) {
  const csp = pageCsp(newNonce(), process.env.NODE_ENV !== "production");
  const headers = new Headers(request.headers);
  headers.set("content-security-policy", csp);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", csp);
  return response;
}

export const config = {
  matcher: [
    {
      source: "/((?!v1(?:/|$)|api/|mcp(?:/|$)|oauth/(?:token|revoke|register|jwks)(?:/|$)|\\.well-known/|_next/|docs(?:/|$)|icon\\.svg$|favicon\\.ico$).*)",
      // The router's prefetch fetches no HTML to run. A browser's own prefetch (`Purpose:
      // prefetch`) fetches the very page it may show later, so it gets the policy too.
      missing: [{ type: "header", key: "next-router-prefetch" }],
    },
  ],
};
