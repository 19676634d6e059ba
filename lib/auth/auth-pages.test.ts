import { Auth } from "@auth/core";
import Credentials from "@auth/core/providers/credentials";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AUTH_PAGES, logAuthError } from "./auth-pages";
import { signInErrorMessage } from "./signin-message";

// Auth.js's core with this service's pages and logger (lib/auth/next-auth.ts passes it the same
// two); the route itself is covered by e2e/sign-in-hardening.spec.ts against the build.
const BASE = "http://localhost:3000";
const auth = (request: Request) =>
  Auth(request, {
    secret: "a-test-secret-of-enough-length-000000",
    trustHost: true,
    basePath: "/api/auth",
    pages: AUTH_PAGES,
    logger: { error: logAuthError },
    providers: [Credentials({ credentials: { email: {}, password: {} }, authorize: () => null })],
  });
const get = (path: string) => auth(new Request(`${BASE}${path}`));

afterEach(() => {
  vi.restoreAllMocks();
});

describe("Auth.js's own pages are the console's (no stock page, no 500)", () => {
  it("GET /api/auth/signin/credentials, which Auth.js does not serve, lands on /signin, with no stack logged", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = await get("/api/auth/signin/credentials");
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("location")!);
    expect(to.origin + to.pathname).toBe(`${BASE}/signin`);
    // It arrives as Auth.js's "Configuration", which the sign-in page leaves unsaid.
    expect(signInErrorMessage(to.searchParams.get("error") ?? undefined, undefined)).toBeNull();
    expect(logged).not.toHaveBeenCalled();
  });

  it("GET /api/auth/signin, /api/auth/signout and /api/auth/error redirect to the console's pages", async () => {
    for (const [path, page] of [
      ["/api/auth/signin", "/signin"],
      ["/api/auth/signout", "/signout"],
      ["/api/auth/error?error=Configuration", "/signin"],
      ["/api/auth/verify-request", "/signin"],
    ]) {
      const res = await get(path!);
      expect(res.status, path).toBe(302);
      expect(new URL(res.headers.get("location")!, BASE).pathname, path).toBe(page);
    }
  });

  it("logs nothing for a session cookie that does not decrypt, nor for a sign-out without its CSRF token: the caller's doing", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const session = await auth(new Request(`${BASE}/api/auth/session`, { headers: { cookie: "authjs.session-token=garbage.not.a.jwe" } }));
    expect(session.status).toBe(200);
    expect(await session.json()).toBeNull();
    const signOut = await auth(new Request(`${BASE}/api/auth/signout`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" }));
    expect(signOut.status).toBe(302);
    expect(logged).not.toHaveBeenCalled();
  });

  it("still logs the server's own errors", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    logAuthError(Object.assign(new Error("no secret"), { type: "MissingSecret" }));
    expect(logged).toHaveBeenCalledTimes(1);
  });

  it("puts a refused password that arrives on the sign-in page in words", () => {
    expect(signInErrorMessage("CredentialsSignin", "invalid_credentials")).toBe("That email and password do not match an account.");
    expect(signInErrorMessage("MissingCSRF", undefined)).toMatch(/expired/);
  });
});
