import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { authorizeLink, signUpNewPerson } from "./helpers";

// A browser app (SPEC §4.5: native and browser apps use PKCE) on an origin of its own: after
// consent it lands on its own page, whose script exchanges the code at /oauth/token and calls
// /v1 with the token, in a real browser that enforces CORS.

async function browserApp(baseURL: string) {
  let verifier = "";
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><title>Pocket Log</title><pre id="out">working</pre>
<script>
(async () => {
  const base = ${JSON.stringify(baseURL)};
  const q = new URLSearchParams(location.search);
  const out = document.getElementById("out");
  try {
    const t = await fetch(base + "/oauth/token", { method: "POST", body: new URLSearchParams({ grant_type: "authorization_code", client_id: "demo-mobile", code: q.get("code"), code_verifier: ${JSON.stringify(verifier)}, redirect_uri: location.origin + location.pathname }) });
    const tokens = await t.json();
    const me = await fetch(base + "/v1/athletes/me", { headers: { Authorization: "Bearer " + tokens.access_token } });
    const body = await me.json();
    const bad = await fetch(base + "/v1/athletes/me", { headers: { Authorization: "Bearer not-a-token" } });
    out.textContent = JSON.stringify({ token: t.status, me: me.status, name: body.name, rateLimit: me.headers.get("RateLimit"), requestId: me.headers.get("Request-Id"), bad: bad.status, challenge: bad.headers.get("WWW-Authenticate") });
  } catch (e) {
    out.textContent = "failed: " + e;
  }
})();
</script>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    redirectUri: `${origin}/callback`,
    setVerifier: (v: string) => (verifier = v),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

test("a browser app on its own origin exchanges its code and calls /v1 from its page's script", async ({ browser, baseURL, request }) => {
  const app = await browserApp(baseURL!);
  try {
    const { page, context } = await signUpNewPerson(browser, "Bea");
    const link = authorizeLink("demo-mobile", app.redirectUri, ["athlete.read"]);
    app.setVerifier(link.verifier);
    await page.goto(link.url);
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((u) => u.href.startsWith(`${app.redirectUri}?`));
    const out = page.locator("#out");
    await expect(out).not.toHaveText("working", { timeout: 15_000 });
    const text = (await out.textContent())!;
    expect(text, "the page's script could not read an answer").not.toMatch(/^failed/);
    const seen = JSON.parse(text) as Record<string, unknown>;
    expect(seen).toMatchObject({ token: 200, me: 200, name: "Bea", bad: 401 });
    expect(seen.rateLimit).toEqual(expect.stringContaining("15min"));
    expect(seen.requestId).toEqual(expect.any(String));
    expect(seen.challenge).toEqual(expect.stringContaining("resource_metadata="));
    await context.close();

    // What the browser asked first for the bearer call, and would ask for a token request with Basic credentials.
    for (const [path, method, headers] of [
      ["/v1/athletes/me", "GET", "authorization"],
      ["/oauth/token", "POST", "authorization, content-type"],
    ] as const) {
      const pre = await request.fetch(path, {
        method: "OPTIONS",
        headers: { origin: "https://app.example", "access-control-request-method": method, "access-control-request-headers": headers },
      });
      expect(pre.status(), path).toBe(204);
      expect(pre.headers()["access-control-allow-origin"], path).toBe("*");
      expect(pre.headers()["access-control-allow-methods"], path).toContain(method);
      expect(pre.headers()["access-control-allow-headers"]?.toLowerCase(), path).toContain("authorization");
    }
  } finally {
    await app.close();
  }
});
