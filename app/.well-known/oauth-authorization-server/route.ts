// GET /.well-known/oauth-authorization-server: RFC 8414 metadata, public and cacheable.
import { getEnv } from "@/lib/env";
import { authorizationServerMetadata } from "@/lib/oauth/discovery";
import { publicDocument } from "@/lib/http/public-document";

export const { GET, OPTIONS, POST, PUT, PATCH, DELETE } = publicDocument("public, max-age=3600", () => authorizationServerMetadata(getEnv()));
