import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resetEnvForTests } from "../env";
import { safeReturnPath } from "./safe-redirect";

const BASE = "https://aas.example.com";
let savedBaseUrl: string | undefined;

beforeAll(() => {
  savedBaseUrl = process.env.BASE_URL;
  process.env.BASE_URL = BASE;
  resetEnvForTests();
});
afterAll(() => {
  if (savedBaseUrl === undefined) delete process.env.BASE_URL;
  else process.env.BASE_URL = savedBaseUrl;
  resetEnvForTests();
});

/** Where a browser goes when a redirect's Location is `path`, from a page of this service. */
function browserTarget(path: string): URL {
  return new URL(path, `${BASE}/signin`);
}

describe("safeReturnPath: sign-in is not an open redirect", () => {
  it("keeps an authorization request's whole return path: a state of 1,000 characters, encoded again, is over 2,000", () => {
    const state = JSON.stringify({ back: "/".repeat(980) });
    const path = `/oauth/authorize?client_id=demo-mobile&redirect_uri=${encodeURIComponent("http://127.0.0.1:5555/callback")}&state=${encodeURIComponent(state)}`;
    expect(path.length).toBeGreaterThan(2000);
    expect(safeReturnPath(path)).toBe(path);
    expect(safeReturnPath(`/${"x".repeat(20_000)}`)).toBe("/activities");
  });

  it("keeps same-site paths with their query and fragment", () => {
    expect(safeReturnPath("/oauth/authorize?client_id=a&scope=x%20y")).toBe("/oauth/authorize?client_id=a&scope=x%20y");
    expect(safeReturnPath("/activities/act_1#laps")).toBe("/activities/act_1#laps");
    expect(safeReturnPath(`${BASE}/settings/tokens?x=1`)).toBe("/settings/tokens?x=1");
  });

  it.each(["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "", undefined, 42, "http://aas.example.com/x"])(
    "refuses %s",
    (raw) => {
      expect(safeReturnPath(raw)).toBe("/activities");
    },
  );

  it.each([
    ["/.//evil.com", "/evil.com"],
    ["/..//evil.com", "/evil.com"],
    ["/%2e//evil.com", "/evil.com"],
    ["/%2E%2E//evil.com/x?y=1", "/evil.com/x?y=1"],
    ["/./\\evil.com", "/evil.com"],
  ])("never answers a path a browser reads as another host: %s -> %s", (raw, path) => {
    expect(safeReturnPath(raw)).toBe(path);
    expect(browserTarget(path).origin).toBe(BASE);
  });

  // Every way of spelling "another host" we know of, each behind every prefix: whatever comes
  // back, followed by a browser, stays on this service.
  const prefixes = [
    "",
    "/",
    "//",
    "///",
    "////",
    "/./",
    "/../",
    "/.//",
    "/..//",
    "/%2e/",
    "/%2e%2e/",
    "/%2e//",
    "/%2E/",
    "/%2f",
    "/%2F/",
    "/%5c",
    "/%5C/",
    "\\",
    "\\\\",
    "/\\",
    "\\/",
    "/\t/",
    "/\n/",
    "/\r\n/",
    "\t//",
    " //",
    "/ /",
    "https:",
    "https:/",
    "https://",
    "http:",
    "http:/",
    "http://",
    "HTTPS://",
    "//user@",
    "/@",
    "javascript:",
    "data:text/html,",
    "/.%2e/",
    "/a/../../",
    "/a/..//",
  ];
  const hosts = ["evil.com", "evil.com/x?y=z", "evil.com\\x", "evil.com:443/", "127.0.0.1", "[::1]/x", "%65vil.com"];
  const cases = prefixes.flatMap((p) => hosts.map((h) => p + h));

  it(`keeps all ${cases.length} tricky return paths on this service`, () => {
    for (const raw of cases) {
      const path = safeReturnPath(raw);
      expect(path.startsWith("/"), JSON.stringify(raw)).toBe(true);
      expect(/^\/[/\\]/.test(path), `${JSON.stringify(raw)} -> ${path}`).toBe(false);
      expect(/[\t\r\n]/.test(path), JSON.stringify(raw)).toBe(false);
      expect(browserTarget(path).origin, `${JSON.stringify(raw)} -> ${path}`).toBe(BASE);
      // Deciding again gives the same answer: what sign-in hands on is a fixed point.
      expect(safeReturnPath(path), JSON.stringify(raw)).toBe(path);
    }
  });
});
