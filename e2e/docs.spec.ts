import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test, type Page } from "@playwright/test";
import { bearer, createToken, signUpNewPerson } from "./helpers";

// The API reference (/docs) run as a developer runs it: "Authorize", then "Execute" on an
// operation, against this service. What Swagger UI sends is what the service gets.

const SAMPLE = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "Friday-Evening-Run.gpx");

/** The auth dialog's section for one security scheme and flow (its heading names them). */
function authSection(page: Page, heading: RegExp) {
  return page.locator(".auth-container").filter({ has: page.locator("h4", { hasText: heading }) });
}

/** Opens /docs and gives "Authorize" a personal access token, as a developer pastes one. */
async function authorizeWithToken(page: Page, token: string) {
  await page.goto("/docs");
  await page.locator(".auth-wrapper").getByRole("button", { name: "Authorize" }).click();
  const section = authSection(page, /bearerAuth/);
  await section.locator("input").fill(token);
  // Named as it reads (its own label said "Apply credentials"), in a dialog named by its title.
  await expect(page.getByRole("dialog", { name: "Available authorizations" })).toBeVisible();
  await section.getByRole("button", { name: "Authorize", exact: true }).click();
  await expect(section.getByRole("button", { name: "Remove authorization" })).toBeVisible();
  await page.getByRole("button", { name: "Close", exact: true }).first().click();
}

/** Opens an operation's block (Try it out is on from the start) and answers its Execute with the live response. */
async function execute(page: Page, operation: string) {
  const block = page.locator(`[id$="-${operation}"]`);
  if (!(await block.locator(".opblock-body").isVisible())) await block.locator(".opblock-summary-control").click();
  const live = block.locator(".live-responses-table tbody tr.response").first();
  // An earlier Execute's answer is cleared first, so the one read below is this request's
  // (read at once, the previous answer was taken for this one while it was still on its way).
  const clear = block.getByRole("button", { name: "Clear", exact: true });
  if (await clear.isVisible()) {
    await clear.click();
    await expect(live).toHaveCount(0);
  }
  await block.getByRole("button", { name: "Execute" }).click();
  await expect(live).toBeVisible();
  return {
    block,
    status: Number((await live.locator(".response-col_status").textContent())!.trim()),
    body: (await live.locator(".response-col_description pre.microlight").first().textContent())!,
  };
}

test("on /docs, a token-authorized Execute of an upload sends the file and only the fields filled in: the activity is named from the file, and a second upload is not a duplicate", async ({ browser, request }) => {
  const { page, context } = await signUpNewPerson(browser, "Swagger");
  try {
    const token = await createToken(page, "docs", ["activities.read", "activities.write"]);
    await authorizeWithToken(page, token);

    const uploads: string[] = [];
    for (let i = 0; i < 2; i++) {
      const block = page.locator('[id$="-createUpload"]');
      if (!(await block.locator(".opblock-body").isVisible())) await block.locator(".opblock-summary-control").click();
      await block.locator('input[type="file"]').setInputFiles({ name: `run-${i}.gpx`, mimeType: "application/gpx+xml", buffer: readFileSync(SAMPLE) });
      const answered = await execute(page, "createUpload");
      expect(answered.status, answered.body).toBe(202);
      // No external_id went with the file: the fields left empty were not sent (as placeholders, "string", or empty).
      expect(JSON.parse(answered.body)).toMatchObject({ external_id: null });
      uploads.push((JSON.parse(answered.body) as { id: string }).id);
    }
    for (const id of uploads) {
      await expect
        .poll(async () => ((await (await request.get(`/v1/uploads/${id}`, { headers: bearer(token) })).json()) as { status: string }).status)
        .not.toBe("processing");
    }
    const [first, second] = await Promise.all(uploads.map(async (id) => (await (await request.get(`/v1/uploads/${id}`, { headers: bearer(token) })).json()) as { status: string; activity_id: string | null; error: unknown }));
    expect(first!.status).toBe("succeeded");
    const activity = (await (await request.get(`/v1/activities/${first!.activity_id}`, { headers: bearer(token) })).json()) as { name: string; sport_type: string };
    // Named and typed from the file, not from the form's placeholders ("string", the first sport).
    expect(activity).toMatchObject({ name: "Friday Evening Run", sport_type: "run" });
    // The same file again is the same activity (duplicate_activity), not a refused external_id "string".
    expect(second).toMatchObject({ status: "failed", error: { code: "duplicate_activity" }, activity_id: first!.activity_id });
  } finally {
    await context.close();
  }
});

test("on /docs, Execute of createActivity and createMetric as they start is recorded", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Sampler");
  try {
    const token = await createToken(page, "docs", ["activities.write", "metrics.write"]);
    await authorizeWithToken(page, token);
    for (const operation of ["createActivity", "createMetric"]) {
      const { status, body } = await execute(page, operation);
      expect(status, `${operation}: ${body}`).toBe(201);
    }
  } finally {
    await context.close();
  }
});

test("on /docs, Authorize runs OAuth's authorization-code flow for the developer's own app, and Execute then acts as the athlete who allowed it", async ({ browser, baseURL }) => {
  const { page, context } = await signUpNewPerson(browser, "Oauthor");
  try {
    await page.goto("/developers/apps");
    await page.getByRole("button", { name: "Register app" }).click();
    await page.getByLabel("App name").fill("Docs Explorer");
    await page.getByRole("radio", { name: /Confidential/ }).check();
    await page.getByLabel("Redirect URIs").fill(`${baseURL}/docs/assets/oauth2-redirect.html`);
    await page.getByRole("button", { name: "Register", exact: true }).click();
    const secret = (await page.getByTestId("client-secret").textContent())!.trim();
    const clientId = (await page.getByTestId("client-id").textContent())!.trim();

    await page.goto("/docs");
    await page.locator(".auth-wrapper").getByRole("button", { name: "Authorize" }).click();
    const section = authSection(page, /authorizationCode/);
    await section.getByLabel("client_id:").fill(clientId);
    await section.getByLabel("client_secret:").fill(secret);
    await section.getByText("athlete.read", { exact: true }).click();
    const popup = page.waitForEvent("popup");
    await section.getByRole("button", { name: "Authorize", exact: true }).click();
    const consent = await popup;
    await expect(consent.getByText("Docs Explorer")).toBeVisible();
    // The popup closes itself once the code is handed back, possibly before the click returns:
    // waited for from before the click, so a close that quick is not missed.
    const closed = consent.waitForEvent("close");
    await consent.getByRole("button", { name: "Allow" }).click();
    await closed;
    // Back on /docs, the flow ended with a token: the section offers Logout.
    await expect(section.getByRole("button", { name: "Remove authorization" })).toBeVisible();
    await page.getByRole("button", { name: "Close", exact: true }).first().click();

    const block = page.locator('[id$="-getAthlete"]');
    await block.locator(".opblock-summary-control").click();
    await block.locator('input[placeholder="athlete_id"]').fill("me");
    const { status, body } = await execute(page, "getAthlete");
    expect(status, body).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ name: "Oauthor" });
  } finally {
    await context.close();
  }
});

test("on /docs, the Authorize dialog takes the focus, keeps Tab and Shift+Tab inside it, and gives the focus back to Authorize when closed", async ({ page }) => {
  await page.goto("/docs");
  const opener = page.locator(".auth-wrapper").getByRole("button", { name: "Authorize" });
  await opener.focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog", { name: "Available authorizations" });
  await expect(dialog).toBeVisible();
  const inDialog = () => dialog.evaluate((d) => d.contains(document.activeElement));
  // The focus is in the dialog as it opens, on one of its fields.
  await expect.poll(inDialog).toBe(true);
  await expect(dialog.locator("input:focus")).toHaveCount(1);
  // However far Tab goes (the dialog has fewer than 40 stops), it stays inside; so does Shift+Tab.
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press("Tab");
    expect(await inDialog(), `after Tab ${i + 1}`).toBe(true);
  }
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press("Shift+Tab");
    expect(await inDialog(), `after Shift+Tab ${i + 1}`).toBe(true);
  }
  await dialog.getByRole("button", { name: "Close", exact: true }).first().click();
  await expect(dialog).toBeHidden();
  await expect(opener).toBeFocused();
});
