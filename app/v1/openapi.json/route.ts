// GET /v1/openapi.json: the machine-readable API description, public (SPEC §4.5).
import { route } from "@/lib/http/api-route";
import { getEnv } from "@/lib/env";
import { openApiDocument } from "@/lib/openapi/document";
import { knownLengthJson } from "@/lib/http/known-length";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: async () =>
    knownLengthJson(openApiDocument(getEnv().baseUrl), {
      headers: { "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*" },
    }),
});
