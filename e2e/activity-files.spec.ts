import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test, type Page } from "@playwright/test";
import { NEW_PERSON_PASSWORD, signUpNewPerson } from "./helpers";

// The activity-files journey in a real browser against the real service: an athlete adds two
// files (one picked, one dropped), watches both go through sending and processing, opens one,
// sees its route and charts, downloads it as GPX, deletes it, and it is gone.

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");
const FIT = "2013-02-06-12-11-14.fit";
const GPX = "Friday-Evening-Run.gpx";

/** Drops files on the upload zone as a file manager would: a drop event carrying a DataTransfer. */
async function dropFiles(page: Page, files: { name: string; bytes: Buffer; type: string }[]) {
  const dataTransfer = await page.evaluateHandle(
    (list) => {
      const dt = new DataTransfer();
      for (const f of list) dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name, { type: f.type }));
      return dt;
    },
    files.map((f) => ({ name: f.name, type: f.type, b64: f.bytes.toString("base64") })),
  );
  const zone = page.getByTestId("upload-drop-zone");
  await zone.dispatchEvent("dragenter", { dataTransfer });
  await zone.dispatchEvent("drop", { dataTransfer });
}

test("an athlete uploads two files, opens one with its route and charts, downloads its GPX and deletes it", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Robin");
  try {
    await page.goto("/activities");
    const zone = page.getByTestId("upload-drop-zone");
    await expect(zone).toBeVisible();

    // One file through the picker that "Upload files" opens…
    const chooser = page.waitForEvent("filechooser");
    await page.getByRole("button", { name: "Upload files" }).click();
    await (await chooser).setFiles(path.join(fixtures, FIT));

    // …and one dropped on the zone.
    await dropFiles(page, [{ name: GPX, bytes: readFileSync(path.join(fixtures, GPX)), type: "application/gpx+xml" }]);

    // Each file has its own progress bar, named after it, that ends at done with a link to the activity.
    for (const name of [FIT, GPX]) {
      const bar = page.getByRole("progressbar", { name: `${name} upload progress` });
      await expect(bar).toBeVisible();
      await expect(bar).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
      await expect(bar).toHaveAttribute("aria-valuenow", "100");
    }
    const gpxRow = page.getByTestId("upload-row").filter({ hasText: GPX });
    await expect(gpxRow.getByRole("link", { name: "Friday Evening Run" })).toBeVisible();
    const fitLink = page.getByTestId("upload-row").filter({ hasText: FIT }).getByRole("link");
    await expect(fitLink).toHaveCount(1);
    await expect(fitLink).not.toHaveText("…");
    const fitHref = (await fitLink.getAttribute("href"))!;
    expect(fitHref).toMatch(/^\/activities\/act_/);

    // The list refreshed by itself: both activities are in it.
    const list = page.getByRole("list", { name: "Activities" });
    await expect(list.locator(`a[href="${fitHref}"]`)).toBeVisible();
    await expect(list.getByRole("link", { name: "Friday Evening Run" })).toBeVisible();

    // The run from the FIT file: its route, its charts (drawn by uPlot on canvases) and its laps.
    await fitLink.click();
    await expect(page).toHaveURL(fitHref);
    const route = page.getByRole("img", { name: "Route" });
    await expect(route).toBeVisible();
    await expect(route.locator("path").first()).toHaveAttribute("d", /^M[\d.]+ [\d.]+L/);
    const pace = page.getByRole("img", { name: /^Pace against distance: fastest \d+:\d\d \/km/ });
    const heart = page.getByRole("img", { name: /^Heart rate against distance: from \d+ bpm/ });
    await expect(pace).toBeVisible();
    await expect(heart).toBeVisible();
    await expect(pace.locator("canvas")).toHaveCount(1);
    await expect(heart.locator("canvas")).toHaveCount(1);
    await page.getByRole("button", { name: "Time" }).click();
    await expect(page.getByRole("img", { name: /^Heart rate against time/ })).toBeVisible();
    await expect(page.getByRole("button", { name: "Time" })).toHaveAttribute("aria-pressed", "true");
    await expect(page.getByRole("table", { name: "Laps" }).locator("tbody tr")).toHaveCount(5);

    // Download offers the formats, and closes once the keyboard's focus leaves it.
    const downloadButton = page.getByRole("button", { name: "Download" });
    await downloadButton.click();
    await expect(downloadButton).toHaveAttribute("aria-expanded", "true");
    for (let i = 0; i < 5; i++) await page.keyboard.press("Tab");
    await expect(page.getByRole("button", { name: "Delete", exact: true })).toBeFocused();
    await expect(downloadButton).toHaveAttribute("aria-expanded", "false");
    // GPX comes as a file the browser saves.
    await downloadButton.click();
    const downloading = page.waitForEvent("download");
    await page.getByRole("link", { name: "GPX", exact: true }).click();
    const download = await downloading;
    const text = readFileSync((await download.path())!, "utf8");
    expect(text.startsWith("<?xml")).toBe(true);
    expect(text).toContain("<gpx");
    expect(text).toContain("<trkpt");

    // "Delete" (CONTRACT §11) acts on one click, then the list says what was deleted and no
    // longer has it.
    const name = (await page.getByRole("heading", { level: 1 }).textContent())!.trim();
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await expect(page).toHaveURL(/\/activities$/);
    await expect(page.getByText(`Deleted “${name}”, with its samples, laps and file.`)).toBeVisible();
    // …and the keyboard goes on from that notice.
    await expect(page.locator(":focus")).toHaveText(`Deleted “${name}”, with its samples, laps and file.`);
    await expect(list.getByRole("link", { name: "Friday Evening Run" })).toBeVisible();
    await expect(list.locator(`a[href="${fitHref}"]`)).toHaveCount(0);

    await page.goto(fitHref);
    await expect(page.getByText("This activity is not here: it was deleted, or the address is wrong.")).toBeVisible();
  } finally {
    await context.close();
  }
});

test("the file input has a name of its own: files set through its label are uploaded, and \"Upload files\" still names one button", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Kai");
  try {
    await page.goto("/activities");
    await expect(page.getByRole("button", { name: "Upload files" })).toHaveCount(1);
    const input = page.getByLabel("Choose files");
    await expect(input).toHaveAttribute("type", "file");
    await input.setInputFiles(path.join(fixtures, GPX));

    const bar = page.getByRole("progressbar", { name: `${GPX} upload progress` });
    await expect(bar).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
    await expect(page.getByTestId("upload-row").filter({ hasText: GPX }).getByRole("link", { name: "Friday Evening Run" })).toBeVisible();
  } finally {
    await context.close();
  }
});

test("files that cannot become activities are refused in words, and nothing is added", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Sam");
  try {
    await page.goto("/activities");
    await expect(page.getByText("No activities yet.", { exact: false })).toBeVisible();
    const fit = readFileSync(path.join(fixtures, FIT));
    await dropFiles(page, [
      { name: "notes.txt", bytes: Buffer.from("Intervals on Tuesday: 6 × 800 m.\n"), type: "text/plain" },
      // The FIT file cut short: its header promises more data than arrives.
      { name: "cut.fit", bytes: fit.subarray(0, 2000), type: "application/octet-stream" },
      { name: GPX, bytes: readFileSync(path.join(fixtures, GPX)), type: "application/gpx+xml" },
    ]);
    const row = (name: string) => page.getByTestId("upload-row").filter({ hasText: name });
    const bar = (name: string) => page.getByRole("progressbar", { name: `${name} upload progress` });

    await expect(bar("notes.txt")).toHaveAttribute("aria-valuetext", "Failed", { timeout: 30_000 });
    await expect(row("notes.txt")).toContainText("This is not a FIT, GPX or TCX file");
    await expect(bar("cut.fit")).toHaveAttribute("aria-valuetext", "Failed", { timeout: 30_000 });
    await expect(row("cut.fit")).toContainText("This file is damaged or incomplete");
    await expect(bar(GPX)).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
    const created = row(GPX).getByRole("link", { name: "Friday Evening Run" });
    const href = (await created.getAttribute("href"))!;

    // The same file again is a duplicate, pointing at the activity it already made.
    await page.getByRole("button", { name: "Clear finished" }).click();
    await expect(page.getByTestId("upload-row")).toHaveCount(0);
    await dropFiles(page, [{ name: GPX, bytes: readFileSync(path.join(fixtures, GPX)), type: "application/gpx+xml" }]);
    await expect(bar(GPX)).toHaveAttribute("aria-valuetext", "Failed", { timeout: 30_000 });
    await expect(row(GPX)).toContainText("You already uploaded this file.");
    await expect(row(GPX).getByRole("link", { name: "Friday Evening Run" })).toHaveAttribute("href", href);

    // Only the one good file became an activity.
    await expect(page.getByRole("list", { name: "Activities" }).getByRole("listitem")).toHaveCount(1);
  } finally {
    await context.close();
  }
});

test("a session that ends while a file is processing: the row says the outcome is not known, and the page offers to sign in again", async ({ browser }) => {
  const { page, context, email } = await signUpNewPerson(browser, "Noor");
  try {
    await page.goto("/activities");
    // The upload is taken (202), and the session ends before the page asks how it went: its
    // cookie is gone from the first question on.
    await page.route("**/api/console/uploads/*", async (route) => {
      await context.clearCookies();
      const { cookie: _sent, ...headers } = route.request().headers();
      await route.continue({ headers });
    });
    const chooser = page.waitForEvent("filechooser");
    await page.getByRole("button", { name: "Upload files" }).click();
    await (await chooser).setFiles(path.join(fixtures, GPX));

    const bar = page.getByRole("progressbar", { name: `${GPX} upload progress` });
    await expect(bar).toHaveAttribute("aria-valuetext", "Not known", { timeout: 15_000 });
    const row = page.getByTestId("upload-row").filter({ hasText: GPX });
    await expect(row.getByText("Could not learn how the upload went: Not loaded.")).toBeVisible();
    await expect(row.getByRole("button", { name: "Check again" })).toBeVisible();

    // Every console page then says so once (not again in the row), with the way back to where the person was.
    await expect(page.getByText("Your session has ended. Nothing more can be saved until you sign in again.")).toBeVisible();
    await expect(page.getByText(/session has ended/i)).toHaveCount(1);
    await page.getByRole("link", { name: "Sign in again" }).click();
    await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Factivities$/);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(NEW_PERSON_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(/\/activities$/);
    // The file was taken before the session ended: its activity is there.
    await expect(page.getByRole("list", { name: "Activities" }).getByRole("link", { name: "Friday Evening Run" })).toBeVisible();
  } finally {
    await context.close();
  }
});
