import { expect, test, type APIRequestContext } from "@playwright/test";
import { DEMO_PASSWORD } from "./helpers";

/** Signs `request` in through Auth.js's own endpoints, as the sign-in form's action does. */
async function signInByRequest(request: APIRequestContext, email: string) {
  const { csrfToken } = (await (await request.get("/api/auth/csrf")).json()) as { csrfToken: string };
  const res = await request.post("/api/auth/callback/credentials", {
    form: { csrfToken, email, password: DEMO_PASSWORD },
    maxRedirects: 0,
  });
  expect(res.status()).toBe(302);
  expect(res.headers()["location"]).not.toContain("error");
}

const SIGNED_OUT_PAGES = ["/signin", "/signup", "/demo/callback", "/docs"];
const CONSOLE_PAGES = [
  "/activities",
  "/settings/profile",
  "/settings/apps",
  "/settings/tokens",
  "/settings/teams",
  "/teams",
  "/developers/apps",
  "/developers/apps/demo-training-log",
  "/developers/apps/demo-training-log/webhooks",
  "/developers/apps/demo-training-log/usage",
];

function expectUnframeable(headers: Record<string, string>, path: string) {
  expect(headers["content-security-policy"], path).toContain("frame-ancestors 'none'");
  expect(headers["x-frame-options"], path).toBe("DENY");
}

test("no page of the service can be framed: console pages with their buttons, sign-up and the demo pages too", async ({ request }) => {
  for (const path of SIGNED_OUT_PAGES) {
    const res = await request.get(path, { maxRedirects: 0 });
    expect(res.status(), path).toBe(200);
    expectUnframeable(res.headers(), path);
  }
  await signInByRequest(request, "dev@example.com");
  for (const path of CONSOLE_PAGES) {
    const res = await request.get(path, { maxRedirects: 0 });
    expect(res.status(), path).toBe(200);
    expectUnframeable(res.headers(), path);
  }
});

test("a form or server action posted to a page from another site is refused with a 403 page, never a 500", async ({ request }) => {
  for (const path of ["/signin", "/signup", "/demo/callback", "/oauth/authorize?client_id=demo-training-log"]) {
    // A cross-site HTML form (multipart, as a page's action posts without script) and a forged action call.
    const form = await request.post(path, { multipart: { email: "ava@example.com" }, headers: { Origin: "https://evil.example" }, maxRedirects: 0 });
    expect(form.status(), path).toBe(403);
    expect(await form.text(), path).toContain("This form was sent from another site");
    const action = await request.post(path, { data: "[]", headers: { Origin: "null", "Next-Action": "7f00", "Content-Type": "text/plain;charset=UTF-8" }, maxRedirects: 0 });
    expect(action.status(), path).toBe(403);
  }
});

test("a page runs only the scripts its own answer names: a nonce of its own in its policy, and an inline handler slipped into the page is refused", async ({ page }) => {
  const answer = await page.goto("/signin");
  const policy = answer!.headers()["content-security-policy"] ?? "";
  const nonce = /'nonce-([A-Za-z0-9+/=]+)'/.exec(policy)?.[1];
  expect(nonce, policy).toBeTruthy();
  expect(policy).toContain("object-src 'none'");
  expect(policy).not.toContain("'unsafe-inline' 'strict-dynamic'");
  // Each answer has a nonce of its own.
  const again = await page.request.get("/signin");
  expect(again.headers()["content-security-policy"]).not.toContain(nonce!);
  // A browser's own prefetch of a page (link rel=prefetch) is the page it may show: the same policy.
  const prefetched = await page.request.get("/signin", { headers: { Purpose: "prefetch" } });
  expect(prefetched.headers()["content-security-policy"]).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);

  // Markup with an inline handler, as a stored name would be if it were ever written into the page unescaped.
  const refused = await page.evaluate(
    () =>
      new Promise<{ directive: string; ran: boolean }>((resolve) => {
        document.addEventListener("securitypolicyviolation", (e) => resolve({ directive: e.effectiveDirective, ran: "pwned" in window }), { once: true });
        document.body.insertAdjacentHTML("beforeend", '<img src="data:," onerror="window.pwned = true" alt="">');
      }),
  );
  expect(refused).toEqual({ directive: "script-src-attr", ran: false });
});

test("the console's pages carry the same policy, signed in, and their scripts run under it", async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await signInByRequest(context.request, "ava@example.com");
    for (const path of ["/activities", "/settings/tokens", "/problems", "/developers/apps/demo-training-log/webhooks"]) {
      const res = await page.goto(path);
      expect(res!.headers()["content-security-policy"], path).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
    }
    // Scripts ran: a client-side control answers.
    await page.goto("/settings/tokens");
    await page.getByRole("button", { name: "Create token" }).click();
    await expect(page.getByLabel("Name", { exact: true })).toBeFocused();
  } finally {
    await context.close();
  }
});

test("/docs runs Swagger UI from its own files under a policy without inline script", async ({ page }) => {
  const answer = await page.goto("/docs");
  const policy = answer!.headers()["content-security-policy"] ?? "";
  expect(policy).toContain("script-src 'self';");
  expect(policy).toContain("frame-ancestors 'none'");
  // Its scripts ran: the reference is drawn from /v1/openapi.json.
  await expect(page.getByRole("heading", { name: /Athlete Activity Service/ }).first()).toBeVisible();
  await expect(page.locator(".opblock").first()).toBeVisible();
});
