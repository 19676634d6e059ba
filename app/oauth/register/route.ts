// POST /oauth/register: Dynamic Client Registration (RFC 7591) of public clients, for assistants (CONTRACT §12).
import { oauthMethodNotAllowed } from "@/lib/oauth/endpoint";
import { registrationEndpoint } from "@/lib/oauth/register";
import { forAnyOrigin, preflight } from "@/lib/http/cors";

export const POST = forAnyOrigin(registrationEndpoint);
// A browser app asks first (lib/http/cors.ts).
export const OPTIONS = preflight("POST", "Content-Type");
export { oauthMethodNotAllowed as GET, oauthMethodNotAllowed as PUT, oauthMethodNotAllowed as PATCH, oauthMethodNotAllowed as DELETE };
