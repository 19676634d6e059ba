import { expect, test } from "@playwright/test";
import { signUpNewPerson } from "./helpers";

// The console's creates carry an Idempotency-Key per submission: an athlete whose first Save
// reached the service but whose answer was lost (a dropped connection) presses Save again and
// gets one activity, not two.

test("an activity saved again after its answer was lost is recorded once", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Sol");
  try {
    await page.goto("/activities");
    await page.getByRole("button", { name: "Record activity" }).click();
    await page.getByLabel("Name").fill("Lost answer run");
    await page.getByLabel("Duration").fill("30:00");

    // The first Save reaches the service, which records the run; its answer never reaches the page.
    let dropped = false;
    await page.route("**/api/console/activities", async (route) => {
      if (route.request().method() !== "POST" || dropped) return route.continue();
      dropped = true;
      await route.fetch();
      await route.abort("connectionreset");
    });
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText("could not be reached")).toBeVisible();
    expect(dropped).toBe(true);

    // Saved again: the same submission, answered as the first was.
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText("Recorded “Lost answer run”")).toBeVisible();
    const list = page.getByRole("list", { name: "Activities" });
    await expect(list.getByRole("link", { name: /Lost answer run/ })).toHaveCount(1);
  } finally {
    await context.close();
  }
});
