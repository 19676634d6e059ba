import { Auth, skipCSRFCheck } from "@auth/core";
import Credentials from "@auth/core/providers/credentials";
import { CallbackRouteError } from "@auth/core/errors";
import { afterEach, describe, expect, it, vi } from "vitest";
import { resetEnvForTests } from "../env";
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
  process.env.LOG_LEVEL = "silent";
  resetEnvForTests();
});

/** What is written to stderr (where lib/log writes errors) and to console.error, at LOG_LEVEL=error. */
function captureErrors(): string[] {
  process.env.LOG_LEVEL = "error";
  resetEnvForTests();
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  });
  return lines;
}

describe("Auth.js's own pages are the console's (no stock page, no 500)", () => {
  it("GET /api/auth/signin/credentials, which Auth.js does not serve, lands on /signin, with no stack logged", async () => {
    const logged = captureErrors();
    const res = await get("/api/auth/signin/credentials");
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("location")!);
    expect(to.origin + to.pathname).toBe(`${BASE}/signin`);
    // It arrives as Auth.js's "Configuration", which the sign-in page leaves unsaid.
    expect(signInErrorMessage(to.searchParams.get("error") ?? undefined, undefined)).toBeNull();
    expect(logged).toEqual([]);
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
    const logged = captureErrors();
    const session = await auth(new Request(`${BASE}/api/auth/session`, { headers: { cookie: "authjs.session-token=garbage.not.a.jwe" } }));
    expect(session.status).toBe(200);
    expect(await session.json()).toBeNull();
    const signOut = await auth(new Request(`${BASE}/api/auth/signout`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" }));
    expect(signOut.status).toBe(302);
    expect(logged).toEqual([]);
  });

  it("still logs the server's own errors, each as one JSON line at error level", () => {
    const logged = captureErrors();
    logAuthError(Object.assign(new Error("no secret"), { type: "MissingSecret" }));
    expect(logged).toHaveLength(1);
    expect(logged[0]!.trimEnd().split("\n")).toHaveLength(1);
    expect(JSON.parse(logged[0]!)).toMatchObject({ level: "error", error: "Error: no secret" });
  });

  it("logs what authorize threw (a database that cannot be reached) as one line naming the error and its cause, without a stack", async () => {
    const logged = captureErrors();
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const res = await Auth(
      new Request(`${BASE}/api/auth/callback/credentials`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email: "a@example.com", password: "a-password-of-length" }),
      }),
      {
        secret: "a-test-secret-of-enough-length-000000",
        trustHost: true,
        basePath: "/api/auth",
        pages: AUTH_PAGES,
        logger: { error: logAuthError },
        skipCSRFCheck,
        providers: [
          Credentials({
            credentials: { email: {}, password: {} },
            authorize: () => {
              throw new Error("Failed query: select 1", { cause: refused });
            },
          }),
        ],
      },
    );
    expect(res.status).toBe(302);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.trimEnd().split("\n")).toHaveLength(1);
    const line = JSON.parse(logged[0]!);
    expect(line).toMatchObject({ level: "error", cause: "Error: Failed query: select 1; Error: connect ECONNREFUSED 127.0.0.1:5432" });
    expect(line.error).toMatch(/^CallbackRouteError: /);
    expect(logged[0]).not.toMatch(/ {4}at /);
    // An Error as the cause, as Error's own option gives it, is named so too.
    logAuthError(new CallbackRouteError("wrapped", { cause: refused }));
    expect(JSON.parse(logged[1]!).cause).toBe("Error: connect ECONNREFUSED 127.0.0.1:5432");
  });

  it("puts a refused password that arrives on the sign-in page in words", () => {
    expect(signInErrorMessage("CredentialsSignin", "invalid_credentials")).toBe("That email and password do not match an account.");
    expect(signInErrorMessage("MissingCSRF", undefined)).toMatch(/expired/);
  });
});
