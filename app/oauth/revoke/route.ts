// POST /oauth/revoke: token revocation (RFC 7009).
import { oauthEndpoint, oauthMethodNotAllowed } from "@/lib/oauth/endpoint";
import { forAnyOrigin, preflight } from "@/lib/http/cors";
import { revokeToken } from "@/lib/oauth/revoke";

export const POST = forAnyOrigin(
  oauthEndpoint(async (db, req, form, prove) => {
    await revokeToken(db, req.headers.get("authorization"), form, prove);
    return new Response(null, { status: 200, headers: { "Cache-Control": "no-store" } });
  }, "oauth-revoke-client"),
);

// A browser app asks first (lib/http/cors.ts).
export const OPTIONS = preflight("POST", "Authorization, Content-Type");

export { oauthMethodNotAllowed as GET, oauthMethodNotAllowed as PUT, oauthMethodNotAllowed as PATCH, oauthMethodNotAllowed as DELETE };
