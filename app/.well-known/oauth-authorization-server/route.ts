// GET /.well-known/oauth-authorization-server: RFC 8414 metadata, public and cacheable.
import { getEnv } from "@/lib/env";
import { authorizationServerMetadata } from "@/lib/oauth/discovery";
import { knownLengthJson } from "@/lib/http/known-length";

export function GET() {
  return knownLengthJson(authorizationServerMetadata(getEnv()), {
    headers: { "Cache-Control": "public, max-age=3600", "Access-Control-Allow-Origin": "*" },
  });
}
