// POST /oauth/token: authorization_code, refresh_token and client_credentials grants (RFC 6749).
import { oauthEndpoint, oauthMethodNotAllowed } from "@/lib/oauth/endpoint";
import { forAnyOrigin, preflight } from "@/lib/http/cors";
import { tokenRequest } from "@/lib/oauth/token";
import { knownLengthJson } from "@/lib/http/known-length";

export const POST = forAnyOrigin(
  oauthEndpoint(async (db, req, form, prove) =>
    knownLengthJson(await tokenRequest(db, req.headers.get("authorization"), form, prove), {
      headers: { "Cache-Control": "no-store", Pragma: "no-cache" },
    }),
  ),
);

// A browser app asks first (lib/http/cors.ts).
export const OPTIONS = preflight("POST", "Authorization, Content-Type");

export { oauthMethodNotAllowed as GET, oauthMethodNotAllowed as PUT, oauthMethodNotAllowed as PATCH, oauthMethodNotAllowed as DELETE };
