// GET /oauth/jwks: the public keys that verify access tokens.
import { servedJwks } from "@/lib/oauth/keys";

export async function GET() {
  return Response.json(await servedJwks(), {
    headers: { "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*" },
  });
}
