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
