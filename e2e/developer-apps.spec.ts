import { expect, test, type Page } from "@playwright/test";
import { signIn, signUpNewPerson } from "./helpers";

// The developer's apps in a browser: what each page says, and where the keyboard's focus goes.

/** Registers a confidential app on /developers/apps, closes its secret, and returns its client_id. */
async function registerApp(page: Page, name: string) {
  await page.goto("/developers/apps");
  await page.getByRole("button", { name: "Register app" }).click();
  await page.getByLabel("App name").fill(name);
  await page.getByLabel("Redirect URIs").fill("https://app.example.com/callback");
  await page.getByRole("button", { name: "Register", exact: true }).click();
  const clientId = (await page.getByTestId("client-id").textContent())!.trim();
  await page.getByRole("button", { name: "Done", exact: true }).click();
  return clientId;
}

test("deleting an app lands on the list, which says what was deleted where the focus goes", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Dora");
  try {
    const clientId = await registerApp(page, "Doomed Tracker");
    await page.goto(`/developers/apps/${clientId}`);
    // Asked once more on the page, in words (no dialog); Cancel gives the keyboard back to "Delete app".
    const opener = page.getByRole("button", { name: "Delete app" });
    await opener.click();
    const question = page.getByRole("group", { name: "Delete Doomed Tracker" });
    await expect(page.locator(":focus")).toHaveText(
      "Delete Doomed Tracker? No athlete has authorized it now; its webhook subscriptions are deleted and every token issued to it stops working. This cannot be undone.",
    );
    await question.getByRole("button", { name: "Cancel" }).click();
    await expect(opener).toBeFocused();
    await expect(page).toHaveURL(new RegExp(`/developers/apps/${clientId}$`));
    await opener.click();
    await page.getByRole("button", { name: "Delete Doomed Tracker", exact: true }).click();
    await expect(page).toHaveURL(/\/developers\/apps$/);
    const said = "Deleted Doomed Tracker: every athlete who authorized it is disconnected, and its tokens no longer work.";
    await expect(page.locator(":focus")).toHaveText(said);
    await expect(page.getByRole("listitem", { name: "Doomed Tracker" })).toHaveCount(0);
    // Said once: a later visit to the list does not repeat it.
    await page.goto("/developers/apps");
    await expect(page.getByRole("heading", { name: "Developer apps" })).toBeVisible();
    await expect(page.getByText(said)).toHaveCount(0);
  } finally {
    await context.close();
  }
});

test("after a rotated client secret's Done, the focus is back on Rotate secret", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Rota");
  try {
    const clientId = await registerApp(page, "Rotating Tracker");
    await page.goto(`/developers/apps/${clientId}`);
    const rotate = page.getByRole("button", { name: "Rotate secret" });
    await rotate.click();
    await expect(page.getByTestId("client-secret")).toBeVisible();
    await page.getByRole("button", { name: "Done", exact: true }).click();
    await expect(page.getByTestId("client-secret")).toHaveCount(0);
    await expect(rotate).toBeFocused();
  } finally {
    await context.close();
  }
});

test("Rotate secret clicked twice in the same instant rotates once: the secret shown is the one that works", async ({ browser, request }) => {
  const { page, context } = await signUpNewPerson(browser, "Twice");
  try {
    const clientId = await registerApp(page, "Twice Rotated");
    await page.goto(`/developers/apps/${clientId}`);
    let rotations = 0;
    page.on("request", (r) => void (r.url().endsWith("/rotate-secret") && rotations++));
    // Two clicks before React renders again (a fast double click, a script's clicks).
    await page.getByRole("button", { name: "Rotate secret" }).evaluate((b: HTMLElement) => {
      b.click();
      b.click();
    });
    const secret = (await page.getByTestId("client-secret").textContent())!.trim();
    await page.waitForTimeout(500); // time for a second request to show, had one been sent
    expect(rotations).toBe(1);
    const res = await request.post("/oauth/token", {
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString("base64")}` },
      form: { grant_type: "client_credentials" },
    });
    expect(res.status(), await res.text()).toBe(200);
  } finally {
    await context.close();
  }
});

test("an app's pages are titled by its name once loaded; a missing app's webhooks and usage pages are titled and headed as not found", async ({ page }) => {
  await signIn(page, "dev@example.com");
  await page.goto("/developers/apps/demo-training-log");
  await expect(page.getByRole("heading", { level: 1, name: "Demo Training Log" })).toBeVisible();
  await expect(page).toHaveTitle("Demo Training Log · Athlete Activity Service");
  await page.goto("/developers/apps/demo-training-log/webhooks");
  await expect(page.getByRole("heading", { level: 1, name: "Webhooks of Demo Training Log" })).toBeVisible();
  await expect(page).toHaveTitle("Webhooks · Demo Training Log · Athlete Activity Service");
  await page.goto("/developers/apps/demo-training-log/usage");
  await expect(page.getByRole("heading", { level: 1, name: "Usage of Demo Training Log" })).toBeVisible();
  await expect(page).toHaveTitle("Usage · Demo Training Log · Athlete Activity Service");

  for (const sub of ["webhooks", "usage"]) {
    await page.goto(`/developers/apps/no-such-app/${sub}`);
    await expect(page.getByRole("heading", { level: 1, name: "App not found" })).toBeVisible();
    await expect(page.getByText("You have no app with client_id no-such-app.")).toBeVisible();
    await expect(page).toHaveTitle("App not found · Athlete Activity Service");
  }
});

test("the register form says every field's problem at once: a missing name and a bad redirect URI together", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Ivy");
  try {
    await page.goto("/developers/apps");
    await page.getByRole("button", { name: "Register app" }).click();
    await page.getByLabel("Redirect URIs").fill("http://app.example.com/callback");
    await page.getByRole("button", { name: "Register", exact: true }).click();
    await expect(page.getByLabel("App name")).toHaveAccessibleDescription(/Give the app a name\./);
    await expect(page.getByLabel("Redirect URIs")).toHaveAccessibleDescription(/"http:\/\/app\.example\.com\/callback" must use https:\/\//);
  } finally {
    await context.close();
  }
});
