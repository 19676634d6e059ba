import { expect, test } from "@playwright/test";
import { bearer, createToken, NEW_PERSON_PASSWORD, signIn, signInAgainInNewTab, signInAsSomeoneElseInAnotherTab, signUpNewPerson } from "./helpers";

test("a new person signs up, creates a token, sees it once, uses it, revokes it, and the API refuses it", async ({ page, request }) => {
  const email = `runner-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.test`;

  await page.goto("/signup");
  await page.getByLabel("Name").fill("Riley Runner");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("a-long-password");
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page).toHaveURL(/\/activities/);

  // Signing out and in again: the account persists and the password works.
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin/);
  await signIn(page, email, "a-long-password");

  // "Create token" opens its form in the button's place, with the focus in the form's first
  // field; Cancel gives the focus back to the button.
  await page.goto("/settings/tokens");
  await page.getByRole("button", { name: "Create token" }).click();
  await expect(page.getByLabel("Name", { exact: true })).toBeFocused();
  await page.getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByRole("button", { name: "Create token" })).toBeFocused();

  const token = await createToken(page, "export script", ["athlete.read", "activities.read"]);
  await expect(page.getByText("It is shown only once")).toBeVisible();
  // The form and its Create button are gone: the keyboard goes on from the shown-once token.
  await expect(page.locator(":focus")).toHaveText("Copy it now. It is shown only once and cannot be recovered.");
  // The example request scrolls sideways on a narrow screen: the keyboard can reach it.
  const example = page.getByRole("region", { name: "Example request, scrollable" });
  await expect(example).toContainText(token);
  await expect(example).toHaveAttribute("tabindex", "0");

  const me = await request.get("/v1/athletes/me", { headers: bearer(token) });
  expect(me.status()).toBe(200);
  expect(await me.json()).toMatchObject({ email, name: "Riley Runner" });

  // "Done" goes away with the token: the new token's row takes the focus, not the top of the page.
  const row = page.getByRole("listitem", { name: "export script" });
  await expect(row).toBeVisible();
  // Valid until revoked unless an expiry was chosen (SPEC §3): the form's default.
  await expect(row).toContainText("No expiry");
  await page.getByRole("button", { name: "Done", exact: true }).click();
  await expect(page.getByTestId("new-token")).toHaveCount(0);
  await expect(row).toBeFocused();

  // Shown once: after a reload only the prefix and last four characters remain.
  await page.reload();
  await expect(page.getByTestId("new-token")).toHaveCount(0);
  await expect(row).toContainText(`aas_pat_…${token.slice(-4)}`);
  await expect(page.getByText(token)).toHaveCount(0);
  await expect(row).toContainText("Last used");

  // Named "Revoke" exactly (CONTRACT §9) and revokes on its own, no dialog to answer; the list item it sits in names the token.
  await row.getByRole("button", { name: "Revoke", exact: true }).click();
  await expect(row).toContainText("Revoked");
  // The button is gone; the keyboard goes on from the token's row, not from the top of the page.
  await expect(row).toBeFocused();

  const refused = await request.get("/v1/athletes/me", { headers: bearer(token) });
  expect(refused.status()).toBe(401);
  expect(await refused.json()).toMatchObject({ code: "token_revoked" });
  expect(refused.headers()["www-authenticate"]).toContain('error="invalid_token"');
});

test("revoking a token another tab already revoked: the refusal is said, the list is asked again and the row, now Revoked, takes the focus", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Tove");
  try {
    await createToken(page, "two tabs", ["athlete.read"]);
    await page.getByRole("button", { name: "Done", exact: true }).click();
    const other = await context.newPage();
    await other.goto("/settings/tokens");
    const stale = other.getByRole("listitem", { name: "two tabs" });
    await expect(stale).toContainText("Active");

    const row = page.getByRole("listitem", { name: "two tabs" });
    await row.getByRole("button", { name: "Revoke", exact: true }).click();
    await expect(row).toContainText("Revoked");

    await stale.getByRole("button", { name: "Revoke", exact: true }).click();
    await expect(other.getByText("Could not revoke “two tabs”")).toBeVisible();
    await expect(stale).toContainText("Revoked");
    await expect(stale.getByRole("button", { name: "Revoke", exact: true })).toHaveCount(0);
    await expect(stale).toBeFocused();
  } finally {
    await context.close();
  }
});

test("the session ends while a token is being made: Sign in again opens a new tab, the form keeps what was typed, and Create then works", async ({ browser }) => {
  const { page, context, email } = await signUpNewPerson(browser, "Noor");
  try {
    await page.goto("/settings/tokens");
    await page.getByRole("button", { name: "Create token" }).click();
    await page.getByLabel("Name", { exact: true }).fill("kept while signed out");
    await page.getByRole("checkbox", { name: /^activities\.read\b/ }).check();

    await context.clearCookies();
    await page.getByRole("button", { name: "Create token" }).click();
    await expect(page.getByText("Your session has ended. Nothing more can be saved until you sign in again.")).toBeVisible();

    await signInAgainInNewTab(page, email, NEW_PERSON_PASSWORD, /\/settings\/tokens$/);
    // The form is as it was left: the same press now makes the token.
    await expect(page.getByLabel("Name", { exact: true })).toHaveValue("kept while signed out");
    await expect(page.getByRole("checkbox", { name: /^activities\.read\b/ })).toBeChecked();
    await page.getByRole("button", { name: "Create token" }).click();
    await expect(page.getByTestId("new-token")).toBeVisible();
    await expect(page.getByRole("listitem", { name: "kept while signed out" })).toBeVisible();
  } finally {
    await context.close();
  }
});

test("someone else signs in in another tab while a page is open: the page's Create is refused, nothing is made for them, and the page says whose the session is now", async ({ browser }) => {
  const { page, context, email } = await signUpNewPerson(browser, "Ines");
  try {
    await page.goto("/settings/tokens");
    await page.getByRole("button", { name: "Create token" }).click();
    await page.getByLabel("Name", { exact: true }).fill("not for the next person");

    await signInAsSomeoneElseInAnotherTab(context, "ava@example.com");

    await page.getByRole("button", { name: "Create token" }).click();
    await expect(page.getByRole("alert").filter({ hasText: `This browser is now signed in as ava@example.com, not ${email}.` })).toBeVisible();
    await expect(page.getByTestId("new-token")).toHaveCount(0);
    await page.getByRole("button", { name: "Reload" }).click();
    await expect(page.getByText("ava@example.com", { exact: true })).toBeVisible();
    await expect(page.getByRole("listitem", { name: "not for the next person" })).toHaveCount(0);
  } finally {
    await context.close();
  }
});

test("a wrong password gets a clear message on the page, not an error page", async ({ page }) => {
  await page.goto("/signin");
  await page.getByLabel("Email").fill("ava@example.com");
  await page.getByLabel("Password").fill("not-her-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByText("That email and password do not match an account.")).toBeVisible();
  await expect(page).toHaveURL(/\/signin/);
});

test("a malformed sign-up form names each bad field", async ({ page }) => {
  await page.goto("/signup");
  await page.getByLabel("Email").fill("not-an-email");
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page.getByText("Enter a valid email address")).toBeVisible();
  await expect(page.getByText("Use at least 8 characters")).toBeVisible();
});

test("a sign-up refused for its email keeps the new password typed, so fixing the email is all it takes; one refused for its password clears it", async ({ page }) => {
  await page.goto("/signup");
  await page.getByLabel("Email").fill("ava@example.com");
  await page.getByLabel("Password").fill("a-long-new-password");
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page.getByText("An account with this email already exists.")).toBeVisible();
  await expect(page.getByLabel("Password")).toHaveValue("a-long-new-password");
  // Kept in the field's value, not written into the page's markup.
  await expect(page.getByLabel("Password")).not.toHaveAttribute("value", /./);
  await page.getByLabel("Email").fill(`kept.${Date.now()}@example.com`);
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page.getByText("Use at least 8 characters")).toBeVisible();
  await expect(page.getByLabel("Password")).toHaveValue("");
  await page.getByLabel("Password").fill("a-long-new-password");
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page).not.toHaveURL(/\/signup/);
});

test("signs up with only Email and Password (CONTRACT §9's fields): the name starts as the email's part before the @", async ({ page }) => {
  const local = `solo.${Date.now()}`;
  await page.goto("/signup");
  await page.getByLabel("Email").fill(`${local}@example.com`);
  await page.getByLabel("Password").fill("a-long-password");
  await page.getByRole("button", { name: "Sign up" }).click();
  await expect(page).not.toHaveURL(/\/signup/);
  await page.goto("/settings/profile");
  await expect(page.getByLabel("Name")).toHaveValue(local);
});
