// GET /.well-known/oauth-protected-resource/v1: RFC 9728 metadata for {base_url}/v1.
import { getEnv } from "@/lib/env";
import { protectedResourceMetadata } from "@/lib/oauth/discovery";
import { knownLengthJson } from "@/lib/http/known-length";

export function GET() {
  return knownLengthJson(protectedResourceMetadata(getEnv()), {
    headers: { "Cache-Control": "public, max-age=3600", "Access-Control-Allow-Origin": "*" },
  });
}
