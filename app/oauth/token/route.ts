// POST /oauth/token: authorization_code, refresh_token and client_credentials grants (RFC 6749).
import { oauthEndpoint } from "@/lib/oauth/endpoint";
import { tokenRequest } from "@/lib/oauth/token";

export const POST = oauthEndpoint(async (db, req, form, prove) =>
  Response.json(await tokenRequest(db, req.headers.get("authorization"), form, prove), {
    headers: { "Cache-Control": "no-store", Pragma: "no-cache" },
  }),
);
