// POST /oauth/token: authorization_code, refresh_token and client_credentials grants (RFC 6749).
import { oauthEndpoint, oauthMethodNotAllowed } from "@/lib/oauth/endpoint";
import { tokenRequest } from "@/lib/oauth/token";
import { knownLengthJson } from "@/lib/http/known-length";

export const POST = oauthEndpoint(async (db, req, form, prove) =>
  knownLengthJson(await tokenRequest(db, req.headers.get("authorization"), form, prove), {
    headers: { "Cache-Control": "no-store", Pragma: "no-cache" },
  }),
);

export { oauthMethodNotAllowed as GET, oauthMethodNotAllowed as PUT, oauthMethodNotAllowed as PATCH, oauthMethodNotAllowed as DELETE };
