import { randomBytes } from "node:crypto";
import { expect, test, type APIRequestContext } from "@playwright/test";
import { DEMO_PASSWORD } from "./helpers";

async function csrf(request: APIRequestContext): Promise<string> {
  return ((await (await request.get("/api/auth/csrf")).json()) as { csrfToken: string }).csrfToken;
}

function signInPost(request: APIRequestContext, csrfToken: string, form: Record<string, string>) {
  return request.post("/api/auth/callback/credentials", { form: { csrfToken, ...form }, maxRedirects: 0 });
}

test("a signed-in visitor sent to /signin?callbackUrl=/.//evil.com stays on the service", async ({ request, baseURL }) => {
  const csrfToken = await csrf(request);
  // Signing in with the hostile callbackUrl: Auth.js's answer stays on the service.
  const signedIn = await signInPost(request, csrfToken, { email: "eve@example.com", password: DEMO_PASSWORD, callbackUrl: "/.//evil.com" });
  expect(signedIn.status()).toBe(302);
  expect(new URL(signedIn.headers()["location"]!, baseURL).origin).toBe(baseURL);

  for (const hostile of ["/.//evil.com", "/..//evil.com", "/%2e//evil.com", "/\\evil.com", "https:evil.com", "///evil.com"]) {
    const res = await request.get(`/signin?callbackUrl=${encodeURIComponent(hostile)}`, { maxRedirects: 0 });
    expect(res.status(), hostile).toBeGreaterThanOrEqual(300);
    expect(res.status(), hostile).toBeLessThan(400);
    const location = res.headers()["location"]!;
    expect(new URL(location, `${baseURL}/signin`).origin, `${hostile} -> ${location}`).toBe(baseURL);
  }
});

test("parallel wrong passwords for one email: at most ten are verified, the rest are locked out", async ({ request }) => {
  const email = `locked-${randomBytes(4).toString("hex")}@example.test`;
  const csrfToken = await csrf(request);
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => signInPost(request, csrfToken, { email, password: `guess-${i}` })),
  );
  const codes = answers.map((r) => new URL(r.headers()["location"]!).searchParams.get("code"));
  expect(codes.filter((c) => c === "invalid_credentials").length).toBeLessThanOrEqual(10);
  expect(codes.filter((c) => c === "too_many_attempts").length).toBeGreaterThanOrEqual(20);
});

test("Auth.js's endpoints and the sign-in form's action refuse oversized bodies", async ({ request, page }) => {
  const csrfToken = await csrf(request);
  const huge = await signInPost(request, csrfToken, { email: "eve@example.com", password: "x".repeat(1024 * 1024) });
  expect(huge.status()).toBe(413);

  // The sign-in form's server action: Next.js stops reading past serverActions.bodySizeLimit
  // (64 KB) and answers 500 (it has no 413 for actions). Under Next.js's default limit (1 MB)
  // this form would reach the action, which answers 200 with "at most 200 characters".
  await page.goto("/signin");
  await page.getByLabel("Email").fill("eve@example.com");
  await page.getByLabel("Password").fill("x".repeat(100 * 1024));
  const action = page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/signin");
  await page.getByRole("button", { name: "Sign in" }).click();
  expect((await action).status()).toBe(500);
});
