// GET /.well-known/oauth-protected-resource/mcp: RFC 9728 metadata for {base_url}/mcp (CONTRACT §12).
import { getEnv } from "@/lib/env";
import { protectedResourceMetadata } from "@/lib/oauth/discovery";
import { publicDocument } from "@/lib/http/public-document";

export const { GET, OPTIONS, POST, PUT, PATCH, DELETE } = publicDocument("public, max-age=3600", () => protectedResourceMetadata(getEnv(), "mcp"));
