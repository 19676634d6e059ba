// GET /oauth/jwks: the public keys that verify access tokens.
import { servedJwks } from "@/lib/oauth/keys";
import { knownLengthJson } from "@/lib/http/known-length";

export async function GET() {
  return knownLengthJson(await servedJwks(), {
    headers: { "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*" },
  });
}
