// POST /oauth/register: Dynamic Client Registration (RFC 7591) of public clients, for assistants (CONTRACT §12).
import { oauthMethodNotAllowed } from "@/lib/oauth/endpoint";
import { registrationEndpoint } from "@/lib/oauth/register";

export const POST = registrationEndpoint;
export { oauthMethodNotAllowed as GET, oauthMethodNotAllowed as PUT, oauthMethodNotAllowed as PATCH, oauthMethodNotAllowed as DELETE };
