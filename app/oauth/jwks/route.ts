// GET /oauth/jwks: the public keys that verify access tokens.
import { getDb } from "@/lib/db/client";
import { publicJwks } from "@/lib/oauth/keys";

export async function GET() {
  return Response.json(await publicJwks(await getDb()), {
    headers: { "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*" },
  });
}
