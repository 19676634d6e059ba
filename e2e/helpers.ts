import { createHash, randomBytes } from "node:crypto";
import { expect, type Browser, type BrowserContext, type Page } from "@playwright/test";

export const DEMO_PASSWORD = "demo-password";

export async function signIn(page: Page, email: string, password = DEMO_PASSWORD) {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/signin/);
}

/**
 * After the session ended: presses the banner's "Sign in again", which opens the sign-in page in
 * a new tab (this page keeps what was typed), signs in there, lands on `landsOn` (the page the
 * banner was on) and closes that tab. The page then says the session is back.
 */
export async function signInAgainInNewTab(page: Page, email: string, password: string, landsOn: RegExp) {
  const [tab] = await Promise.all([page.waitForEvent("popup"), page.getByRole("link", { name: "Sign in again" }).click()]);
  await expect(tab).toHaveURL(/\/signin\?callbackUrl=/);
  await tab.getByLabel("Email").fill(email);
  await tab.getByLabel("Password").fill(password);
  await tab.getByRole("button", { name: "Sign in" }).click();
  await expect(tab).toHaveURL(landsOn);
  await tab.close();
  await page.bringToFront();
  await expect(page.getByRole("status").filter({ hasText: "You are signed in again." })).toBeVisible();
  await expect(page.getByText(/session has ended/i)).toHaveCount(0);
}

/** In another tab of the same browser (`context`): signs out, and in as `email` (a demo account). */
export async function signInAsSomeoneElseInAnotherTab(context: BrowserContext, email: string) {
  const other = await context.newPage();
  await other.goto("/settings/profile");
  await other.getByRole("button", { name: "Sign out" }).click();
  await expect(other).toHaveURL(/\/signin/);
  await signIn(other, email);
  await other.close();
}

/** Creates a PAT on /settings/tokens and returns it as shown, once. */
export async function createToken(page: Page, name: string, scopes: string[]) {
  await page.goto("/settings/tokens");
  await page.getByRole("button", { name: "Create token" }).click();
  await page.getByLabel("Name", { exact: true }).fill(name);
  for (const box of await page.getByRole("checkbox").all()) await box.uncheck();
  for (const s of scopes) await page.getByRole("checkbox", { name: new RegExp(`^${s.replace(".", "\\.")}\\b`) }).check();
  await page.getByRole("button", { name: "Create token" }).click();
  const shown = page.getByTestId("new-token");
  await expect(shown).toBeVisible();
  const token = (await shown.textContent())!.trim();
  expect(token).toMatch(/^aas_pat_[0-9A-Za-z]{38}$/);
  return token;
}

export function bearer(token: string) {
  return { Authorization: `Bearer ${token}` };
}

export const NEW_PERSON_PASSWORD = "a-long-password";

/** Signs up a new person in a browser context of their own; they come back signed in. */
export async function signUpNewPerson(browser: Browser, name: string, options: Parameters<Browser["newContext"]>[0] = {}) {
  const email = `${name.toLowerCase()}-${Date.now()}-${randomBytes(3).toString("hex")}@example.test`;
  const context = await browser.newContext(options);
  const page = await context.newPage();
  await page.goto("/signup");
  await page.getByLabel("Name").fill(name);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(NEW_PERSON_PASSWORD);
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page).toHaveURL(/\/activities/);
  return { email, page, context };
}

/** What an app does before sending the athlete: a PKCE verifier, a state, the authorize link (`extra`: `resource` and the like). */
export function authorizeLink(clientId: string, redirectUri: string, scopes: string[], extra: Record<string, string> = {}) {
  const verifier = randomBytes(32).toString("base64url");
  const state = extra.state ?? randomBytes(16).toString("base64url");
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: "code",
    scope: scopes.join(" "),
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    state,
    ...extra,
  });
  return { url: `/oauth/authorize?${query}`, verifier, state };
}
