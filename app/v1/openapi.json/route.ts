// GET /v1/openapi.json: the machine-readable API description, public (SPEC §4.5).
import { publicAnswer, route } from "@/lib/http/api-route";
import { getEnv } from "@/lib/env";
import { openApiDocument } from "@/lib/openapi/document";
import { knownLengthJson } from "@/lib/http/known-length";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  // Counted and headed as every /v1 answer is (CONTRACT §10). Cacheable by the caller only:
  // its RateLimit header is that caller's.
  GET: (req) =>
    publicAnswer(req, (headers) => {
      headers.set("Cache-Control", "private, max-age=300");
      return knownLengthJson(openApiDocument(getEnv().baseUrl), { headers });
    }),
});
