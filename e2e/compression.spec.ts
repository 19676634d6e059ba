import { expect, test } from "@playwright/test";

// Through the production server itself (Next.js's compression middleware in front of the
// routes): a client that accepts gzip gets a short answer whole, with its length, and a long
// one compressed (scripts/body-length.mjs).
const GZIP = { "accept-encoding": "gzip" };

test("a short answer goes out whole with its Content-Length, a long one gzipped, to a client that accepts gzip", async ({ request }) => {
  for (const path of ["/oauth/jwks", "/.well-known/oauth-protected-resource/v1"]) {
    const res = await request.get(path, { headers: GZIP });
    expect(res.status(), path).toBe(200);
    expect(res.headers()["content-encoding"], path).toBeUndefined();
    expect(res.headers()["content-length"], path).toBe(String((await res.body()).byteLength));
    expect(res.headers()["x-aas-body-length"], path).toBeUndefined();
  }
  // A problem document: the answer of a request without a token.
  const problem = await request.get("/v1/athletes/me", { headers: GZIP });
  expect(problem.status()).toBe(401);
  expect(problem.headers()["content-encoding"]).toBeUndefined();
  expect(problem.headers()["content-length"]).toBe(String((await problem.body()).byteLength));

  const openapi = await request.get("/v1/openapi.json", { headers: GZIP });
  expect(openapi.status()).toBe(200);
  expect(openapi.headers()["content-encoding"]).toBe("gzip");
  expect(openapi.headers()["x-aas-body-length"]).toBeUndefined();
  expect(((await openapi.json()) as { openapi: string }).openapi).toMatch(/^3\./);
});
