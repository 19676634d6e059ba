import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import { expect, test, type Page } from "@playwright/test";
import { authorizeLink, createToken, signIn, signUpNewPerson } from "./helpers";

// Every page a person uses, checked by axe-core in Chromium against WCAG 2.x A and AA and axe's
// best practices: none may have a serious or critical violation. The pages are the console's,
// signed in as the demo person who has something to show there, and the public ones.

const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];

async function expectNoSeriousViolations(page: Page, what: string) {
  // Pages fetch their data after the first paint: check what a person sees once it has settled.
  await page.waitForLoadState("networkidle");
  await expect(page.locator("main, [role=main]").first()).toBeVisible();
  const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  const serious = results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.map((n) => n.target.join(" ")).join("\n    ")}`);
  expect(serious, `${what}:\n${serious.join("\n")}`).toEqual([]);
  // A page without an icon of its own makes the browser ask for /favicon.ico, a 404 in its
  // console on the first visit (what /docs once showed): every page names one that loads.
  const icons = page.locator('link[rel~="icon"]');
  expect(await icons.count(), `${what} names no icon`).toBeGreaterThan(0);
  const icon = await icons.first().getAttribute("href");
  expect((await page.request.get(new URL(icon!, page.url()).href)).status(), `${what}'s icon`).toBe(200);
}

const PUBLIC_PAGES = ["/signin", "/signup", "/docs", "/problems", "/problems/not_found"];
for (const path of PUBLIC_PAGES) {
  test(`${path} has no serious accessibility violation`, async ({ page }) => {
    await page.goto(path);
    await expectNoSeriousViolations(page, path);
  });
}

const ATHLETE_PAGES = ["/activities", "/settings/profile", "/settings/teams", "/settings/apps", "/settings/tokens"];
for (const path of ATHLETE_PAGES) {
  test(`${path} (athlete) has no serious accessibility violation`, async ({ page }) => {
    await signIn(page, "ava@example.com");
    await page.goto(path);
    await expectNoSeriousViolations(page, path);
  });
}

test("an activity's page (route, charts, laps) has no serious accessibility violation", async ({ page }) => {
  await signIn(page, "ava@example.com");
  await page.goto("/activities");
  const first = page.locator('a[href^="/activities/act_"]').first();
  await expect(first).toBeVisible();
  await first.click();
  await expect(page).toHaveURL(/\/activities\/act_/);
  await expectNoSeriousViolations(page, "activity page");
});

test("/teams (coach) has no serious accessibility violation", async ({ page }) => {
  await signIn(page, "cora@example.com");
  await page.goto("/teams");
  await expectNoSeriousViolations(page, "/teams");
  // The question "Delete team" asks before it deletes (cancelled: the demo world stays).
  await page.getByRole("button", { name: "Delete team" }).first().click();
  await expect(page.getByRole("group", { name: /^Delete / })).toBeVisible();
  await expectNoSeriousViolations(page, "/teams, asked whether to delete a team");
  await page.getByRole("button", { name: "Cancel" }).click();
  // A member's activities, reached from the roster.
  await page.getByRole("link", { name: "Ava Lind" }).first().click();
  await expect(page.getByRole("list", { name: "Ava Lind’s activities" }).getByRole("listitem").first()).toBeVisible();
  await expectNoSeriousViolations(page, "a team member's activities");
});

const DEVELOPER_PAGES = ["/developers/apps", "/developers/apps/demo-training-log", "/developers/apps/demo-training-log/webhooks", "/developers/apps/demo-training-log/usage"];
for (const path of DEVELOPER_PAGES) {
  test(`${path} (developer) has no serious accessibility violation`, async ({ page }) => {
    await signIn(page, "dev@example.com");
    await page.goto(path);
    await expectNoSeriousViolations(page, path);
  });
}

test("the webhooks page with a delivery open has no serious violation, and its headings go down one level at a time: endpoint, delivery, attempt", async ({
  page,
}) => {
  // An endpoint on loopback that answers the handshake and every delivery.
  const server = http.createServer((req, res) => {
    if (req.method === "GET") {
      const challenge = new URL(req.url ?? "/", "http://127.0.0.1").searchParams.get("hub.challenge");
      return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ "hub.challenge": challenge }));
    }
    req.resume().on("end", () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await signIn(page, "dev@example.com");
    await page.goto("/developers/apps/demo-training-log/webhooks");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a11y-${randomBytes(3).toString("hex")}`;
    await page.getByLabel("Endpoint URL").fill(url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByRole("button", { name: "Done", exact: true }).click();
    const item = page.getByRole("listitem", { name: url });
    await item.getByRole("button", { name: "Send test event" }).click();
    // Other journeys' activity events may reach the endpoint too: the test event's delivery is the one opened.
    const row = item.getByRole("listitem", { name: /^Delivery / }).filter({ hasText: "webhook.test" });
    await expect(row).toContainText("succeeded");
    await row.getByRole("button", { name: /webhook\.test/ }).click();

    // A screen reader jumping by headings hears which endpoint, which delivery and which attempt a Request or Response is of.
    await expect(item.getByRole("heading", { level: 2, name: url })).toBeVisible();
    await expect(row.getByRole("heading", { level: 3, name: /^webhook\.test evt_\w+$/ })).toHaveCount(1);
    const attempt = row.getByRole("listitem", { name: "Attempt 1" });
    await expect(attempt.getByRole("heading", { level: 4, name: /^Attempt 1 · / })).toBeVisible();
    await expect(attempt.getByRole("heading", { level: 5, name: "Request" })).toBeVisible();
    await expect(attempt.getByRole("heading", { level: 5, name: "Response" })).toBeVisible();

    await expectNoSeriousViolations(page, "webhooks with a delivery open");
    // heading-order is a moderate rule, which the check above lets through.
    const outline = await new AxeBuilder({ page }).withRules(["heading-order", "empty-heading"]).analyze();
    expect(outline.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);

    await item.getByRole("button", { name: "Delete" }).click();
    await expect(page.getByRole("listitem", { name: url })).toHaveCount(0);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test("the consent screen has no serious accessibility violation", async ({ page, baseURL }) => {
  await signIn(page, "ava@example.com");
  const link = authorizeLink("demo-mobile", "http://127.0.0.1:61234/callback", ["athlete.read", "activities.read", "location.read"], { resource: `${baseURL}/v1` });
  await page.goto(link.url);
  await expect(page.getByRole("button", { name: "Allow" })).toBeVisible();
  await expectNoSeriousViolations(page, "consent screen");
});

test("the console's first Tab stop is a visible \"Skip to content\" link that takes the keyboard to the page's main landmark", async ({ page }) => {
  await signIn(page, "ava@example.com");
  await page.goto("/settings/profile");
  // The profile form loads after the heading: until it has, the page holds nothing the keyboard can stop at.
  await expect(page.getByRole("textbox", { name: "Name" })).toBeVisible();
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to content" });
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("main")).toBeFocused();
  await page.keyboard.press("Tab");
  // The next stop is inside the page, past the header's links.
  expect(await page.evaluate(() => !!document.activeElement?.closest("main"))).toBe(true);
});

test("on a 375 px phone the problem types fit the screen: their table scrolls in a region the keyboard reaches", async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 740 });
  await page.goto("/problems");
  const region = page.getByRole("region", { name: "Problem types, scrollable" });
  await expect(region).toHaveAttribute("tabindex", "0");
  await expect(region.getByRole("columnheader", { name: "Title" })).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
});

test("names of one long word (a token's, an activity's, an app's) wrap on a 375 px phone instead of widening the page", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Wren");
  try {
    await page.setViewportSize({ width: 375, height: 740 });
    const long = `Supercalifragilistic_${"x".repeat(74)}`;
    const fits = async (what: string) => expect(await page.evaluate(() => document.documentElement.scrollWidth), what).toBeLessThanOrEqual(375);

    await createToken(page, long, ["athlete.read"]);
    await page.getByRole("button", { name: "Done", exact: true }).click();
    await expect(page.getByRole("listitem", { name: long })).toBeVisible();
    await fits("/settings/tokens");

    await page.goto("/activities");
    await page.getByRole("button", { name: "Record activity" }).click();
    await page.getByLabel("Name").fill(long);
    await page.getByLabel("Duration").fill("30:00");
    await page.getByRole("button", { name: "Save" }).click();
    const link = page.getByRole("list", { name: "Activities" }).getByRole("link", { name: long });
    await expect(link).toBeVisible();
    await fits("/activities");
    await link.click();
    await expect(page.getByRole("heading", { level: 1, name: long })).toBeVisible();
    await fits("the activity's page");

    await page.goto("/developers/apps");
    await page.getByRole("button", { name: "Register app" }).click();
    await page.getByLabel("App name").fill(long);
    await page.getByLabel("Redirect URIs").fill("https://wren.example/callback");
    await page.getByRole("button", { name: "Register", exact: true }).click();
    await page.getByRole("button", { name: "Done", exact: true }).click();
    await fits("/developers/apps");
    await page.getByRole("listitem", { name: long }).getByRole("link", { name: long }).click();
    await expect(page.getByRole("button", { name: "Delete app" })).toBeVisible();
    await fits("the app's page");
    // The question names the app, on its button too.
    await page.getByRole("button", { name: "Delete app" }).click();
    await expect(page.getByRole("button", { name: `Delete ${long}` })).toBeVisible();
    await fits("the app's delete question");
    await page.getByRole("button", { name: "Cancel" }).click();
  } finally {
    await context.close();
  }
});

test("an unknown address answers 404 with the console's not-found page: a main landmark, a heading, a title and a way home", async ({ page }) => {
  const res = await page.goto("/some-unknown-path");
  expect(res?.status()).toBe(404);
  await expect(page).toHaveTitle("Page not found · Athlete Activity Service");
  await expect(page.getByRole("main").getByRole("heading", { level: 1, name: "Page not found" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Go to your activities" })).toHaveAttribute("href", "/activities");
  await expectNoSeriousViolations(page, "/some-unknown-path");
});

test("a developer app that is not there says so under a heading, in the page's title too", async ({ page }) => {
  await signIn(page, "dev@example.com");
  await page.goto("/developers/apps/no-such-app");
  await expect(page.getByRole("heading", { level: 1, name: "App not found" })).toBeVisible();
  await expect(page.getByText("You have no app with client_id no-such-app.")).toBeVisible();
  await expect(page).toHaveTitle("App not found · Athlete Activity Service");
});
