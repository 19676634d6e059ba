// GET /oauth/jwks: the public keys that verify access tokens.
import { servedJwks } from "@/lib/oauth/keys";
import { publicDocument } from "@/lib/http/public-document";

export const { GET, OPTIONS, POST, PUT, PATCH, DELETE } = publicDocument("public, max-age=300", servedJwks);
