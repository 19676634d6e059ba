import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { expect, test, type APIRequestContext, type Browser, type Page } from "@playwright/test";
import { SCOPES, type Scope } from "../lib/auth/scopes";
import { authorizeLink, bearer, NEW_PERSON_PASSWORD, signIn, signInAgainInNewTab, signInAsSomeoneElseInAnotherTab, signUpNewPerson } from "./helpers";

// Journeys of the OAuth flow in a real browser: an app's authorize link, sign-in, consent,
// the callback, and the app's use of the tokens; disconnecting; registering an app.

const DEMO_SECRET = "aas_cs_DemoTrainingLogSecret00000000001v3hLV";
const PASSWORD = NEW_PERSON_PASSWORD;

/** A native app's loopback listener (RFC 8252 §7.3): it records each callback's query. */
async function loopbackApp() {
  const received: URLSearchParams[] = [];
  let requests = 0;
  const waiting: ((q: URLSearchParams) => void)[] = [];
  const server = http.createServer((req, res) => {
    const query = new URL(req.url ?? "/", "http://127.0.0.1").searchParams;
    if (query.has("code") || query.has("error")) requests++;
    res.writeHead(200, { "content-type": "text/html" }).end("<title>Demo Mobile</title><p>Signed in. You can close this window.</p>");
    const next = waiting.shift();
    if (next) next(query);
    else received.push(query);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    /** The query of the next request to the callback. */
    callback: () => new Promise<URLSearchParams>((resolve) => (received.length ? resolve(received.shift()!) : waiting.push(resolve))),
    /** How many answers (a code or an error) reached the callback so far. */
    answers: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function signUp(browser: Browser, name: string) {
  const { email, context } = await signUpNewPerson(browser, name);
  await context.close();
  return email;
}

async function expectConsent(page: Page, appName: string, scopes: Scope[]) {
  await expect(page.getByRole("heading", { name: `${appName} wants to access your account` })).toBeVisible();
  const asked = page.getByRole("list", { name: "Requested permissions" });
  await expect(asked.getByRole("listitem")).toHaveCount(scopes.length);
  for (const s of scopes) await expect(asked).toContainText(SCOPES[s].plain);
  await expect(page.getByRole("button", { name: "Allow" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Deny" })).toBeVisible();
}

async function exchangeCode(request: APIRequestContext, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await request.post("/oauth/token", { form: { grant_type: "authorization_code", ...form }, headers });
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string; token_type: string; expires_in: number; scope: string };
}

test("an athlete signs in from an app's authorize link, allows it, and the app calls /v1 with the token", async ({ browser, request, baseURL }) => {
  const email = await signUp(browser, "Nora");
  const app = await loopbackApp();
  try {
    const scopes: Scope[] = ["athlete.read", "activities.read"];
    const link = authorizeLink("demo-mobile", app.redirectUri, scopes);
    const context = await browser.newContext();
    const page = await context.newPage();

    // Not signed in: sent to sign-in, and back to the consent screen after it.
    await page.goto(link.url);
    await expect(page).toHaveURL(/\/signin\?callbackUrl=/);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(/\/oauth\/authorize\?/);
    await expectConsent(page, "Demo Mobile", scopes);
    await expect(page.getByText(`Signed in as ${email}`)).toBeVisible();

    await page.getByRole("button", { name: "Allow" }).click();
    const callback = await app.callback();
    await page.waitForURL((u) => u.href.startsWith(`${app.redirectUri}?`));
    expect(callback.get("state")).toBe(link.state);
    expect(callback.get("iss")).toBe(baseURL);
    expect(callback.get("code")).toBeTruthy();
    expect(callback.get("error")).toBeNull();

    // The app, a public client, exchanges the code with its verifier and no secret.
    const tokens = await exchangeCode(request, {
      code: callback.get("code")!,
      redirect_uri: app.redirectUri,
      code_verifier: link.verifier,
      client_id: "demo-mobile",
    });
    expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "athlete.read activities.read" });
    const me = await request.get("/v1/athletes/me", { headers: bearer(tokens.access_token) });
    expect(me.status()).toBe(200);
    expect(await me.json()).toMatchObject({ email, name: "Nora" });
    expect((await request.get("/v1/athletes/me/activities", { headers: bearer(tokens.access_token) })).status()).toBe(200);

    // Asked again for part of what was allowed (a public app is always asked): the screen
    // lists that part, what the new code carries, not the whole grant.
    const again = authorizeLink("demo-mobile", app.redirectUri, ["athlete.read"]);
    await page.goto(again.url);
    await expect(page.getByRole("heading", { name: "It asks again for what you already allowed:" })).toBeVisible();
    await expectConsent(page, "Demo Mobile", ["athlete.read"]);
    await page.getByRole("button", { name: "Allow" }).click();
    // From the address the browser was sent to (the listener also hears the browser's favicon request).
    await page.waitForURL((u) => u.href.startsWith(`${app.redirectUri}?`) && u.searchParams.get("state") === again.state);
    const code = new URL(page.url()).searchParams.get("code")!;
    const narrow = await exchangeCode(request, { code, redirect_uri: app.redirectUri, code_verifier: again.verifier, client_id: "demo-mobile" });
    expect(narrow.scope).toBe("athlete.read");
    await context.close();
  } finally {
    await app.close();
  }
});

test("an athlete disconnects an app on /settings/apps and the app is refused at once", async ({ browser, request, baseURL }) => {
  const email = await signUp(browser, "Omar");
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, email, PASSWORD);

  // Signed in already: the authorize link goes straight to consent. The confidential demo app
  // lands on its /demo/callback page; the test plays its server side.
  const redirectUri = `${baseURL}/demo/callback`;
  const link = authorizeLink("demo-training-log", redirectUri, ["athlete.read"]);
  const consent = await page.goto(link.url);
  // The consent screen cannot be framed (RFC 9700 §4.16).
  expect(consent!.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
  await expectConsent(page, "Demo Training Log", ["athlete.read"]);
  await page.getByRole("button", { name: "Allow" }).click();
  await page.waitForURL((u) => u.pathname === "/demo/callback" && u.searchParams.has("code"));
  const callback = new URL(page.url()).searchParams;
  expect(callback.get("state")).toBe(link.state);
  expect(callback.get("iss")).toBe(baseURL);
  const basic = `Basic ${Buffer.from(`demo-training-log:${DEMO_SECRET}`).toString("base64")}`;
  const tokens = await exchangeCode(
    request,
    { code: callback.get("code")!, redirect_uri: redirectUri, code_verifier: link.verifier },
    { authorization: basic },
  );
  expect((await request.get("/v1/athletes/me", { headers: bearer(tokens.access_token) })).status()).toBe(200);

  await page.goto("/settings/apps");
  const row = page.getByRole("listitem", { name: "Demo Training Log" });
  await expect(row).toContainText(SCOPES["athlete.read"].plain);
  await expect(row).toContainText("Authorized");
  // "Disconnect" disconnects on its own: no dialog to answer (CONTRACT §9).
  await row.getByRole("button", { name: "Disconnect" }).click();
  await expect(page.getByText("Disconnected Demo Training Log")).toBeVisible();
  await expect(page.getByRole("listitem", { name: "Demo Training Log" })).toHaveCount(0);

  const refused = await request.get("/v1/athletes/me", { headers: bearer(tokens.access_token) });
  expect(refused.status()).toBe(401);
  expect(await refused.json()).toMatchObject({ code: "token_revoked" });
  const refresh = await request.post("/oauth/token", {
    form: { grant_type: "refresh_token", refresh_token: tokens.refresh_token },
    headers: { authorization: basic },
  });
  expect(refresh.status()).toBe(400);
  expect(await refresh.json()).toMatchObject({ error: "invalid_grant" });
  await context.close();
});

test("a developer registers an app and sees its client secret once", async ({ page, request }) => {
  await signIn(page, "dev@example.com");
  await page.goto("/developers/apps");
  const name = `Journey Log ${Date.now()}-${randomBytes(2).toString("hex")}`;
  // The form opens in the button's place: the keyboard goes on in its first field, and Cancel
  // gives the focus back to the button.
  await page.getByRole("button", { name: "Register app" }).click();
  await expect(page.getByLabel("App name")).toBeFocused();
  await page.getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByRole("button", { name: "Register app" })).toBeFocused();
  await page.getByRole("button", { name: "Register app" }).click();
  await page.getByLabel("App name").fill(name);
  await page.getByRole("radio", { name: /Confidential/ }).check();
  await page.getByLabel("Redirect URIs").fill("https://journey.example/oauth/callback");
  await page.getByRole("button", { name: "Register", exact: true }).click();

  const shown = page.getByTestId("client-secret");
  await expect(shown).toBeVisible();
  await expect(page.getByText("It is shown only once")).toBeVisible();
  const secret = (await shown.textContent())!.trim();
  expect(secret).toMatch(/^aas_cs_[0-9A-Za-z]{38}$/);
  const clientId = (await page.getByTestId("client-id").textContent())!.trim();
  // The form and its Register button are gone: the keyboard goes on from what happened.
  await expect(page.locator(":focus")).toHaveText(/^Copy the client secret now\./);

  // The secret works: the app gets a client-credentials token with it.
  const res = await request.post("/oauth/token", {
    form: { grant_type: "client_credentials" },
    headers: { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}` },
  });
  expect(res.status()).toBe(200);
  expect((await request.get("/v1/app/usage", { headers: bearer(((await res.json()) as { access_token: string }).access_token) })).status()).toBe(200);

  // "Done" goes away with the secret: the new app's row takes the focus.
  const row = page.getByRole("listitem", { name });
  await expect(row).toBeVisible();
  await page.getByRole("button", { name: "Done", exact: true }).click();
  await expect(page.getByTestId("client-secret")).toHaveCount(0);
  await expect(row).toBeFocused();

  // Shown once: after a reload the app is listed and the secret is nowhere.
  await page.reload();
  await expect(row).toContainText(clientId);
  await expect(page.getByTestId("client-secret")).toHaveCount(0);
  await expect(page.getByText(secret)).toHaveCount(0);
  await row.getByRole("link", { name }).click();
  await expect(page.getByRole("heading", { name: "Credentials" })).toBeVisible();
  await expect(page.getByText(clientId).first()).toBeVisible();
  await expect(page.getByText(secret)).toHaveCount(0);

  // "Rotate secret" (CONTRACT §9) acts on one click: the new secret is shown once, the new one
  // works and the old one no longer does.
  await page.getByRole("button", { name: "Rotate secret" }).click();
  const rotated = page.getByTestId("client-secret");
  await expect(rotated).toBeVisible();
  const newSecret = (await rotated.textContent())!.trim();
  expect(newSecret).toMatch(/^aas_cs_[0-9A-Za-z]{38}$/);
  expect(newSecret).not.toBe(secret);
  // …and the page says so where the keyboard is.
  await expect(page.locator(":focus")).toHaveText(/^Copy the client secret now\./);
  const tokenWith = (s: string) =>
    request.post("/oauth/token", {
      form: { grant_type: "client_credentials" },
      headers: { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(s)}`).toString("base64")}` },
    });
  expect((await tokenWith(newSecret)).status()).toBe(200);
  expect((await tokenWith(secret)).status()).toBe(401);

  // "Edit" opens the form in its place, and Cancel gives the focus back to it.
  await page.getByRole("button", { name: "Edit" }).click();
  await expect(page.getByLabel("App name")).toBeFocused();
  await page.getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByRole("button", { name: "Edit" })).toBeFocused();
  // "Save" goes away with the settings form: the keyboard goes on from what it did.
  await page.getByRole("button", { name: "Edit" }).click();
  await page.getByLabel("Homepage URL (optional)").fill("https://journey.example/");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByRole("button", { name: "Save", exact: true })).toHaveCount(0);
  await expect(page.locator(":focus")).toHaveText("Saved. New authorization requests use these settings at once.");
  await expect(page.getByText("https://journey.example/", { exact: true })).toBeVisible();
});

test("an athlete whose session ended presses Disconnect: the page says so once, with Sign in again, nothing was disconnected, and after signing in again in a new tab the same press works", async ({
  browser,
  baseURL,
}) => {
  const { page, context, email } = await signUpNewPerson(browser, "Sami");
  try {
    const link = authorizeLink("demo-training-log", `${baseURL}/demo/callback`, ["athlete.read"]);
    await page.goto(link.url);
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((u) => u.pathname === "/demo/callback" && u.searchParams.has("code"));
    await page.goto("/settings/apps");
    const row = page.getByRole("listitem", { name: "Demo Training Log" });
    await expect(row).toBeVisible();

    // Signed out elsewhere: the page still shows the app, and its Disconnect is refused (401).
    await context.clearCookies();
    await row.getByRole("button", { name: "Disconnect" }).click();
    await expect(page.getByText("Your session has ended. Nothing more can be saved until you sign in again.")).toBeVisible();
    // The action's own notice says only that it was not done; the list's refetch, refused too,
    // says only that it was not loaded, and keeps what it showed.
    await expect(page.getByText("Could not disconnect Demo Training Log: Nothing was changed.")).toBeVisible();
    await expect(page.getByText("Not loaded.", { exact: true })).toBeVisible();
    await expect(row).toBeVisible();
    // The ended session is said once, by the banner, with the one way back.
    await expect(page.getByText(/session has ended/i)).toHaveCount(1);
    await expect(page.getByRole("link", { name: "Sign in again" })).toHaveCount(1);

    // Signing in again in a new tab leaves this page as it is; once the session is back, the same
    // Disconnect works without a reload.
    await signInAgainInNewTab(page, email, PASSWORD, /\/settings\/apps$/);
    await expect(page).toHaveURL(/\/settings\/apps$/);
    await row.getByRole("button", { name: "Disconnect" }).click();
    await expect(page.getByText("Disconnected Demo Training Log")).toBeVisible();
  } finally {
    await context.close();
  }
});

test("a consent screen answered after someone else signed in in another tab decides nothing: the screen is shown again, to the person signed in now", async ({ browser }) => {
  const { page, context, email } = await signUpNewPerson(browser, "Omar");
  const app = await loopbackApp();
  try {
    const link = authorizeLink("demo-mobile", app.redirectUri, ["athlete.read"]);
    await page.goto(link.url);
    await expect(page.getByText(`Signed in as ${email}`)).toBeVisible();

    await signInAsSomeoneElseInAnotherTab(context, "cora@example.com");

    // The screen said "Signed in as Omar": Allow now gives nobody's data to the app.
    await page.getByRole("button", { name: "Allow" }).click();
    await expect(page).toHaveURL(/\/oauth\/authorize\?/);
    await expect(page.getByText("Signed in as cora@example.com")).toBeVisible();
    expect(app.answers()).toBe(0);
  } finally {
    await context.close();
    await app.close();
  }
});

test("pressing Deny returns access_denied with state and iss to the app", async ({ browser, baseURL }) => {
  const email = await signUp(browser, "Pia");
  const app = await loopbackApp();
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, email, PASSWORD);
    const link = authorizeLink("demo-mobile", app.redirectUri, ["athlete.read", "metrics.read"]);
    await page.goto(link.url);
    await expectConsent(page, "Demo Mobile", ["athlete.read", "metrics.read"]);
    await page.getByRole("button", { name: "Deny" }).click();
    const callback = await app.callback();
    await page.waitForURL((u) => u.href.startsWith(`${app.redirectUri}?`));
    expect(callback.get("error")).toBe("access_denied");
    expect(callback.get("state")).toBe(link.state);
    expect(callback.get("iss")).toBe(baseURL);
    expect(callback.get("code")).toBeNull();

    // Nothing was granted: the app is not among the athlete's connected apps.
    await page.goto("/settings/apps");
    await expect(page.getByText("No apps are connected.")).toBeVisible();
    await context.close();
  } finally {
    await app.close();
  }
});

test("the demo app walks the flow in a browser, and refuses to exchange a code that came back naming another issuer (RFC 9207)", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Dina");
  try {
    await page.goto("/demo/callback");
    await page.getByRole("link", { name: "Start the demo" }).click();
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((u) => u.pathname === "/demo/callback" && u.searchParams.has("code"));
    const back = new URL(page.url());

    // The same response with another issuer's name: a mix-up (RFC 9207 §2.4). Nothing is exchanged.
    const forged = new URL(back);
    forged.searchParams.set("iss", "https://other-server.example");
    await page.goto(forged.toString());
    await page.getByRole("button", { name: "Exchange code" }).click();
    await expect(page.getByText("not this service")).toBeVisible();

    // The response as it came: exchanged, and the profile read with the token.
    await page.goto(back.toString());
    await page.getByRole("button", { name: "Exchange code" }).click();
    await expect(page.getByText("Exchanged: the app redeemed the code")).toBeVisible();
    // The answers scroll in their boxes: each is a named region the keyboard reaches.
    await expect(page.getByRole("region", { name: "POST /oauth/token: answer, scrollable" })).toHaveAttribute("tabindex", "0");

    // A code the token endpoint refuses (here one it never issued): said in red alone, never "Exchanged".
    await page.goto("/demo/callback");
    await page.getByRole("link", { name: "Start the demo" }).click();
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((u) => u.pathname === "/demo/callback" && u.searchParams.has("code"));
    const bogus = new URL(page.url());
    bogus.searchParams.set("code", "not-a-code-this-service-issued");
    await page.goto(bogus.toString());
    await page.getByRole("button", { name: "Exchange code" }).click();
    await expect(page.getByText("The token endpoint refused the code, so the API was not called.")).toBeVisible();
    await expect(page.getByText("Exchanged: the app redeemed the code")).toHaveCount(0);
  } finally {
    await context.close();
  }
});

test("a coach's consent screen says the app reads their team's athletes too; an athlete's says nothing of teams", async ({ browser }) => {
  const app = await loopbackApp();
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, "cora@example.com");
    await page.goto(authorizeLink("demo-mobile", app.redirectUri, ["athlete.read", "activities.read"]).url);
    await expectConsent(page, "Demo Mobile", ["athlete.read", "activities.read"]);
    await expect(page.getByRole("note")).toHaveText(
      "You coach Harbor Runners (2 members). With these permissions the app can read the same of your teams' members as of you, for as long as they are on your team.",
    );
    // Only the teams list: nothing of an athlete's own data, nothing to say.
    await page.goto(authorizeLink("demo-mobile", app.redirectUri, ["teams.read"]).url);
    await expectConsent(page, "Demo Mobile", ["teams.read"]);
    await expect(page.getByRole("note")).toHaveCount(0);
    await context.close();

    const athlete = await signUpNewPerson(browser, "Tove");
    await athlete.page.goto(authorizeLink("demo-mobile", app.redirectUri, ["athlete.read", "activities.read"]).url);
    await expectConsent(athlete.page, "Demo Mobile", ["athlete.read", "activities.read"]);
    await expect(athlete.page.getByRole("note")).toHaveCount(0);
    await athlete.context.close();
  } finally {
    await app.close();
  }
});

test("the demo app, seeded with its localhost callback, takes a new redirect URI in the console and gives it back", async ({ page }) => {
  await signIn(page, "dev@example.com");
  await page.goto("/developers/apps/demo-training-log");
  const uris = page.getByLabel("Redirect URIs");
  const added = `https://added-${Date.now()}.example.com/cb`;
  await page.getByRole("button", { name: "Edit" }).click();
  const before = await uris.inputValue();
  await uris.fill(`${before}\n${added}`);
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.locator(":focus")).toHaveText("Saved. New authorization requests use these settings at once.");
  await expect(page.getByText(added, { exact: true })).toBeVisible();

  await page.getByRole("button", { name: "Edit" }).click();
  await uris.fill(before);
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.locator(":focus")).toHaveText("Saved. New authorization requests use these settings at once.");
  await expect(page.getByText(added, { exact: true })).toHaveCount(0);

  // Saving what is there changes nothing, and says so.
  await page.getByRole("button", { name: "Edit" }).click();
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.locator(":focus")).toHaveText("Nothing changed.");
});
