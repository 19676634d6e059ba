import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
// Next.js's own compilation of a `headers()` rule into the regex its router matches paths with.
import { buildCustomRoute } from "next/dist/lib/build-custom-route.js";
import nextConfig from "./next.config";

/** Every page and non-API route the app serves, with a sample value in each dynamic segment. */
function servedPaths(dir = path.join(__dirname, "app"), prefix = ""): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) {
      if (prefix === "" && entry === "api") continue;
      const segment = /^\(.*\)$/.test(entry) ? "" : /^\[+\.*(\w+)\]+$/.test(entry) ? "/sample_1" : `/${entry}`;
      out.push(...servedPaths(full, prefix + segment));
    } else if (entry === "page.tsx" || entry === "route.ts") {
      out.push(prefix || "/");
    }
  }
  return out;
}

/** The headers Next.js adds to an answer for `pathname`: every matching rule in order, later ones winning. */
async function configuredHeaders(pathname: string): Promise<Record<string, string>> {
  const rules = (await nextConfig.headers!()).map((r) => buildCustomRoute("header", r));
  const out: Record<string, string> = {};
  for (const rule of rules) {
    if (!new RegExp(rule.regex).test(pathname)) continue;
    for (const h of rule.headers) out[h.key.toLowerCase()] = h.value;
  }
  return out;
}

describe("next.config.ts: no page can be framed", () => {
  const paths = [...new Set([...servedPaths(), "/settings/tokens/", "/developers/apps/demo-training-log/webhooks", "/docs"])];

  it("finds the console pages it must cover", () => {
    expect(paths).toEqual(expect.arrayContaining(["/", "/signin", "/signup", "/oauth/authorize", "/settings/apps", "/settings/tokens", "/demo/callback"]));
    expect(paths.length).toBeGreaterThan(20);
  });

  it.each(paths)("%s refuses framing (CSP frame-ancestors and X-Frame-Options)", async (pathname) => {
    const headers = await configuredHeaders(pathname);
    expect(headers["content-security-policy"]).toMatch(/(^|; )frame-ancestors 'none'($|;)/);
    expect(headers["x-frame-options"]).toBe("DENY");
    expect(headers["x-content-type-options"]).toBe("nosniff");
  });

  it("gives /docs a policy that runs only its own script files", async () => {
    const policy = (await configuredHeaders("/docs"))["content-security-policy"];
    expect(policy).toContain("script-src 'self';");
    expect(policy).not.toContain("unsafe-inline' 'strict");
  });

  it("keeps the consent screen out of caches", async () => {
    expect((await configuredHeaders("/oauth/authorize"))["cache-control"]).toBe("no-store");
  });
});
