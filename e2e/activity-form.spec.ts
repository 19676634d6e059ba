import { expect, test } from "@playwright/test";
import { signUpNewPerson } from "./helpers";

// The record form's measurements are checked against each other by the service (a maximum is
// never below its average, moving time never longer than the duration); the form shows each
// refusal on its field in its own words, records nothing, and records the activity once mended.

test("a max heart rate below the average and a moving time over the duration are refused on their fields in the form's words; mended, the activity is recorded", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Ines");
  try {
    await page.goto("/activities");
    await page.getByRole("button", { name: "Record activity" }).click();
    await page.getByLabel("Name").fill("Tempo with a typo");
    await page.getByLabel("Duration").fill("40:00");
    await page.getByLabel("Moving time").fill("45:00");
    await page.getByLabel("Average heart rate (bpm)").fill("160");
    await page.getByLabel("Max heart rate (bpm)").fill("150");
    await page.getByRole("button", { name: "Save" }).click();

    // Both broken pairs are refused at once, each on its field, in the form's own words.
    const maxHr = page.getByLabel("Max heart rate (bpm)");
    const moving = page.getByLabel("Moving time");
    await expect(maxHr).toHaveAccessibleDescription(/Must be at least the average heart rate\./);
    await expect(maxHr).toHaveAttribute("aria-invalid", "true");
    await expect(moving).toHaveAccessibleDescription(/Must be no longer than the duration\./);
    await expect(page.getByRole("list", { name: "Activities" }).getByRole("link", { name: /Tempo with a typo/ })).toHaveCount(0);

    await maxHr.fill("178");
    await moving.fill("38:30");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText("Recorded “Tempo with a typo”")).toBeVisible();
    await expect(page.getByRole("list", { name: "Activities" }).getByRole("link", { name: /Tempo with a typo/ })).toHaveCount(1);
  } finally {
    await context.close();
  }
});

test("a new account's timezone is the browser's, so its times read as the athlete's own from the start", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Tui", { timezoneId: "Pacific/Auckland" });
  try {
    await page.goto("/settings/profile");
    await expect(page.getByLabel("Timezone")).toHaveValue("Pacific/Auckland");
    await page.goto("/activities");
    await expect(page.getByText("times are local (Pacific/Auckland)")).toBeVisible();
  } finally {
    await context.close();
  }
});

test("a swim's distance is typed and edited in metres, as its page reads it; a distance typed before the sport changes keeps its meaning", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Mira");
  try {
    await page.goto("/activities");
    await page.getByRole("button", { name: "Record activity" }).click();
    await page.getByLabel("Name").fill("Pool set");
    await page.getByLabel("Duration").fill("40:00");
    await page.getByLabel("Distance (km)").fill("1.5");
    await page.getByLabel("Sport type").selectOption("swim");
    await expect(page.getByLabel("Distance (m)")).toHaveValue("1500");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText("Recorded “Pool set”")).toBeVisible();

    await page.getByRole("list", { name: "Activities" }).getByRole("link", { name: /Pool set/ }).click();
    await expect(page.getByRole("heading", { level: 1, name: "Pool set" })).toBeVisible();
    await expect(page.getByText("1,500 m").first()).toBeVisible();
    await page.getByRole("button", { name: "Edit" }).click();
    await expect(page.getByLabel("Distance (m)")).toHaveValue("1500");
  } finally {
    await context.close();
  }
});
