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

test("parallel wrong passwords for one email: at most ten are verified, the rest are locked out with 429", async ({ request, page }) => {
  const email = `locked-${randomBytes(4).toString("hex")}@example.test`;
  const csrfToken = await csrf(request);
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => signInPost(request, csrfToken, { email, password: `guess-${i}` })),
  );
  // A wrong password is Auth.js's redirect back to the form; the lock is CONTRACT §10's 429.
  const verified = answers.filter((r) => r.status() === 302).map((r) => new URL(r.headers()["location"]!).searchParams.get("code"));
  expect(verified.every((c) => c === "invalid_credentials"), verified.join()).toBe(true);
  expect(verified.length).toBeLessThanOrEqual(10);
  const locked = answers.filter((r) => r.status() === 429);
  expect(locked.length).toBe(30 - verified.length);
  for (const res of locked) {
    const wait = Number(res.headers()["retry-after"]);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(15 * 60 + 10);
    expect(await res.json()).toMatchObject({ error: "too_many_attempts" });
  }

  // The form says so in words, with the wait: the 15 minutes of CONTRACT §10, though the lock
  // runs to the end of a 10-second slice (a Retry-After of up to 910 s).
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("one-more-guess");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText(/^Too many failed attempts for this email\. Wait 15 minutes and try again\.$/)).toBeVisible();
});

test("Auth.js's own pages are the console's: its sign-in, sign-out and error addresses land there, never on a 500", async ({ page, request }) => {
  // An address Auth.js does not serve (it answered a 500 "server configuration" page).
  const unknown = await request.get("/api/auth/signin/credentials", { maxRedirects: 0 });
  expect(unknown.status()).toBe(302);
  expect(new URL(unknown.headers()["location"]!).pathname).toBe("/signin");
  for (const path of ["/api/auth/signin/credentials", "/api/auth/signin", "/api/auth/error?error=Configuration"]) {
    await page.goto(path);
    await expect(page, path).toHaveURL(/\/signin\?/);
    await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
    await expect(page.getByText(/server configuration/i)).toHaveCount(0);
  }

  // Signed out, its sign-out page is the sign-in page; signed in, the console's own sign-out page.
  await page.goto("/api/auth/signout");
  await expect(page).toHaveURL(/\/signin$/);
  await page.getByLabel("Email").fill("eve@example.com");
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/signin/);
  await page.goto("/api/auth/signout");
  await expect(page).toHaveURL(/\/signout$/);
  await expect(page.getByRole("heading", { name: "Sign out" })).toBeVisible();
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin$/);
  await page.goto("/activities");
  await expect(page).toHaveURL(/\/signin\?callbackUrl=/);
});

test("Auth.js's endpoints and the sign-in form's action refuse oversized bodies", async ({ request, page }) => {
  const csrfToken = await csrf(request);
  const huge = await signInPost(request, csrfToken, { email: "eve@example.com", password: "x".repeat(1024 * 1024) });
  expect(huge.status()).toBe(413);

  // The form itself holds a person within the schema's limits (the action's body limit, 64 KB,
  // is never reached from the page): 100 KB typed is 200 characters sent, and the answer is the
  // sign-in's own message in words.
  await page.goto("/signin");
  await page.getByLabel("Email").fill("eve@example.com");
  await page.getByLabel("Password").fill("x".repeat(100 * 1024));
  expect(await page.getByLabel("Password").inputValue()).toHaveLength(200);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText("That email and password do not match an account.")).toBeVisible();
});

test("signing out ends the session on the server: a copy of its cookie taken before signs nobody in", async ({ browser, baseURL }) => {
  const signedIn = await browser.newContext({ baseURL });
  const page = await signedIn.newPage();
  await page.goto("/signin");
  await page.getByLabel("Email").fill("eve@example.com");
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/signin/);
  const session = (await signedIn.cookies()).filter((c) => c.name.endsWith("authjs.session-token"));
  expect(session).toHaveLength(1);

  // The copy works while the session holds: a page and the console's API.
  const copy = await browser.newContext({ baseURL });
  await copy.addCookies(session);
  const copied = await copy.newPage();
  await copied.goto("/settings/profile");
  await expect(copied).toHaveURL(/\/settings\/profile$/);
  expect((await copy.request.get("/api/console/profile")).status()).toBe(200);

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin$/);

  // The same cookie, kept by someone else, is no longer a session anywhere.
  await copied.goto("/settings/profile");
  await expect(copied).toHaveURL(/\/signin\?callbackUrl=/);
  await copy.clearCookies();
  await copy.addCookies(session);
  const api = await copy.request.get("/api/console/profile");
  expect(api.status()).toBe(401);
  const auth = (await (await copy.request.get("/api/auth/session")).json()) as unknown;
  expect(auth).toBeNull();
  await copy.close();
  await signedIn.close();
});
