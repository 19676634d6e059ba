import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test, type Page } from "@playwright/test";
import { NEW_PERSON_PASSWORD, signIn, signInAgainInNewTab, signUpNewPerson } from "./helpers";

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
    // The page is titled by the activity, for the tab and the history.
    const fitName = (await page.getByRole("heading", { level: 1 }).textContent())!.trim();
    expect(fitName).not.toBe("Activity");
    await expect(page).toHaveTitle(`${fitName} · Athlete Activity Service`);
    const route = page.getByRole("img", { name: "Route" });
    await expect(route).toBeVisible();
    await expect(route.locator("path").first()).toHaveAttribute("d", /^M[\d.]+ [\d.]+L/);
    const pace = page.getByRole("img", { name: /^Pace against distance: fastest \d+:\d\d \/km/ });
    const heart = page.getByRole("img", { name: /^Heart rate against distance: from \d+ bpm/ });
    await expect(pace).toBeVisible();
    await expect(heart).toBeVisible();
    await expect(pace.locator("canvas")).toHaveCount(1);
    await expect(heart.locator("canvas")).toHaveCount(1);
    // The route marks where the charts' cursor is: a point of the route itself, while the mouse is on a chart.
    const marker = route.locator("circle[data-cursor]");
    await expect(marker).toHaveCount(0);
    await pace.locator(".u-over").hover();
    await expect(marker).toHaveCount(1);
    const [cx, cy, d] = await Promise.all([marker.getAttribute("cx"), marker.getAttribute("cy"), route.locator("path").first().getAttribute("d")]);
    expect(d).toMatch(new RegExp(`[ML]${cx} ${cy}(?=[ML]|$)`));
    await page.mouse.move(0, 0);
    await expect(marker).toHaveCount(0);
    await page.getByRole("button", { name: "Time" }).click();
    await expect(page.getByRole("img", { name: /^Heart rate against time/ })).toBeVisible();
    await expect(page.getByRole("button", { name: "Time" })).toHaveAttribute("aria-pressed", "true");
    const laps = page.getByRole("table", { name: "Laps" });
    await expect(laps.locator("tbody tr")).toHaveCount(5);
    // The laps' time is the moving time, and says so (their pace is worked out from it).
    await expect(laps.getByRole("columnheader", { name: "Moving time" })).toBeVisible();
    await expect(laps.getByRole("columnheader", { name: "Time", exact: true })).toHaveCount(0);

    // The cursor moves from the keyboard too: Tab reaches it after the axis buttons, and each key
    // sets it on every chart, whose legend reads the value the words say.
    await page.keyboard.press("Tab");
    const cursor = page.getByRole("slider", { name: "Cursor on the charts" });
    await expect(cursor).toBeFocused();
    await expect(cursor).toHaveAttribute("aria-valuetext", /^At 0:00: (pace|no pace)/);
    await page.keyboard.press("End");
    const last = Number(await cursor.getAttribute("aria-valuemax"));
    await expect(cursor).toHaveAttribute("aria-valuenow", String(last));
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.press("ArrowLeft");
    await expect(cursor).toHaveAttribute("aria-valuenow", String(last - 2));
    await page.keyboard.press("PageDown");
    const spoken = (await cursor.getAttribute("aria-valuetext"))!;
    const [, at, bpm] = /^At (\d+:\d\d(?::\d\d)?): .*heart rate (\d+ bpm)/.exec(spoken)!;
    const heartAgainstTime = page.getByRole("img", { name: /^Heart rate against time/ }).locator(".u-legend");
    await expect(heartAgainstTime).toContainText(at!);
    await expect(heartAgainstTime).toContainText(bpm!);
    await expect(page.getByRole("img", { name: /^Pace against time/ }).locator(".u-legend")).toContainText(at!);
    // The legend reads values and is no control: a click on a label leaves its line drawn.
    await heartAgainstTime.locator(".u-series").nth(1).click();
    await expect(heartAgainstTime.locator(".u-off")).toHaveCount(0);
    await cursor.focus();
    await page.keyboard.press("Home");
    await expect(cursor).toHaveAttribute("aria-valuenow", "0");

    // Pace or speed by the sport, the same in the headline and in "Speed and effort".
    const valueOf = (where: import("@playwright/test").Locator, label: string) =>
      where.locator("dt", { hasText: new RegExp(`^${label}$`) }).locator("xpath=following-sibling::dd[1]");
    const headlinePace = await valueOf(page.locator('dl[aria-label="Headline numbers"]'), "Pace").textContent();
    expect(headlinePace).toMatch(/^\d+:\d\d \/km$/);
    const card = page.locator("section").filter({ has: page.getByRole("heading", { name: "Speed and effort" }) });
    await expect(valueOf(card, "Average pace")).toHaveText(headlinePace!);
    await expect(card.getByText("Average speed")).toHaveCount(0);

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
    // Its file is gone only with the last activity made from it (a multisport file makes several): not claimed.
    await expect(page.getByText(`Deleted “${name}”, with its samples and laps.`)).toBeVisible();
    // …and the keyboard goes on from that notice.
    await expect(page.locator(":focus")).toHaveText(`Deleted “${name}”, with its samples and laps.`);
    await expect(list.getByRole("link", { name: "Friday Evening Run" })).toBeVisible();
    await expect(list.locator(`a[href="${fitHref}"]`)).toHaveCount(0);
    // The file's upload row no longer offers the activity: it names it as deleted, with no link to its page.
    const fitRow = page.getByTestId("upload-row").filter({ hasText: FIT });
    await expect(fitRow).toContainText(`${name} (deleted)`);
    await expect(fitRow.getByRole("link")).toHaveCount(0);

    await page.goto(fitHref);
    await expect(page.getByRole("heading", { level: 1, name: "Activity not found" })).toBeVisible();
    await expect(page).toHaveTitle("Activity not found · Athlete Activity Service");
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

test("on a phone, a finger on a chart moves the cursor of every chart, whose legends read the values there", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Tove", { hasTouch: true, isMobile: true, viewport: { width: 390, height: 844 } });
  try {
    await page.goto("/activities");
    await page.getByLabel("Choose files").setInputFiles(path.join(fixtures, FIT));
    const bar = page.getByRole("progressbar", { name: `${FIT} upload progress` });
    await expect(bar).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
    await page.getByTestId("upload-row").filter({ hasText: FIT }).getByRole("link").click();
    const pace = page.getByRole("img", { name: /^Pace against/ });
    const heart = page.getByRole("img", { name: /^Heart rate against/ });
    // Each legend's second row is its channel's value under the cursor: nothing yet, "—".
    const value = (chart: typeof pace) => chart.locator(".u-legend .u-series").nth(1).locator(".u-value");
    await expect(value(heart)).toHaveText("—");
    await pace.scrollIntoViewIfNeeded();
    const plot = (await pace.locator(".u-over").boundingBox())!;
    await page.touchscreen.tap(plot.x + plot.width / 2, plot.y + plot.height / 2);
    // The chart tapped and the one below it both read a value at that point.
    await expect(value(pace)).toHaveText(/\d/);
    await expect(value(heart)).toHaveText(/\d+ bpm/);
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
    // Outcomes are said in a live region that was there before them (one added with its words
    // already in it is not read by most screen readers).
    // What the regions there now come to hold, kept as it happens (later outcomes follow it).
    await page.evaluate(() => {
      const said: string[] = [];
      Object.assign(window, { e2eSaid: said });
      for (const region of document.querySelectorAll("[aria-live]")) {
        new MutationObserver(() => said.push(region.textContent ?? "")).observe(region, { childList: true, characterData: true, subtree: true });
      }
    });
    await dropFiles(page, [
      // Refused before it is sent.
      { name: "empty.gpx", bytes: Buffer.alloc(0), type: "application/gpx+xml" },
      { name: "notes.txt", bytes: Buffer.from("Intervals on Tuesday: 6 × 800 m.\n"), type: "text/plain" },
      // The FIT file cut short: its header promises more data than arrives.
      { name: "cut.fit", bytes: fit.subarray(0, 2000), type: "application/octet-stream" },
      { name: GPX, bytes: readFileSync(path.join(fixtures, GPX)), type: "application/gpx+xml" },
      // The same bytes under another name in the same drop: one of the two is the duplicate.
      { name: "copy-of-run.gpx", bytes: readFileSync(path.join(fixtures, GPX)), type: "application/gpx+xml" },
    ]);
    const row = (name: string) => page.getByTestId("upload-row").filter({ hasText: name });
    const bar = (name: string) => page.getByRole("progressbar", { name: `${name} upload progress` });

    await expect(row("empty.gpx")).toContainText("This file is empty.");
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { e2eSaid: string[] }).e2eSaid.some((t) => t.includes("empty.gpx: This file is empty."))))
      .toBe(true);
    await expect(bar("notes.txt")).toHaveAttribute("aria-valuetext", "Failed", { timeout: 30_000 });
    await expect(row("notes.txt")).toContainText("This is not a FIT, GPX or TCX file");
    await expect(bar("cut.fit")).toHaveAttribute("aria-valuetext", "Failed", { timeout: 30_000 });
    await expect(row("cut.fit")).toContainText("This file is damaged or incomplete");
    // Sent together, either may reach the service first: one is made, the other names it.
    const settled = async (name: string) => {
      await expect(bar(name)).toHaveAttribute("aria-valuetext", /^(Done|Failed)$/, { timeout: 30_000 });
      return bar(name).getAttribute("aria-valuetext");
    };
    const [first, second] = [await settled(GPX), await settled("copy-of-run.gpx")];
    expect([first, second].sort()).toEqual(["Done", "Failed"]);
    const [made, copy] = first === "Done" ? [GPX, "copy-of-run.gpx"] : ["copy-of-run.gpx", GPX];
    const href = (await row(made).getByRole("link", { name: "Friday Evening Run" }).getAttribute("href"))!;
    await expect(row(copy)).toContainText("You already uploaded this file.");
    await expect(row(copy).getByRole("link", { name: "Friday Evening Run" })).toHaveAttribute("href", href);

    // The same file again is a duplicate, pointing at the activity it already made.
    await page.getByRole("button", { name: "Clear finished" }).click();
    await expect(page.getByTestId("upload-row")).toHaveCount(0);
    // "Clear finished" went with the rows; the keyboard goes on from where files are added, not from the page's top.
    await expect(page.getByRole("button", { name: "Upload files" })).toBeFocused();
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

test("a session that ends while a file is processing: the row says the outcome is not known as the person is signed out, and the page offers to sign in again", async ({ browser }) => {
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
    await expect(
      row.getByText("Could not learn how the upload went: you are no longer signed in. The file was received; once you are signed in again, check again."),
    ).toBeVisible();
    await expect(row.getByRole("button", { name: "Check again" })).toBeVisible();

    // Every console page then says so once (not again in the row), with the way back to where the person was.
    await expect(page.getByText("Your session has ended. Nothing more can be saved until you sign in again.")).toBeVisible();
    await expect(page.getByText(/session has ended/i)).toHaveCount(1);
    await signInAgainInNewTab(page, email, NEW_PERSON_PASSWORD, /\/activities$/);
    await page.reload();
    // The file was taken before the session ended: its activity is there.
    await expect(page.getByRole("list", { name: "Activities" }).getByRole("link", { name: "Friday Evening Run" })).toBeVisible();
  } finally {
    await context.close();
  }
});

/** A ride on a trainer, as a TCX file: time, distance and heart rate, and no position at all. */
function indoorRideTcx(): Buffer {
  const start = Date.UTC(2025, 3, 2, 18, 0, 0);
  const points = Array.from({ length: 30 }, (_, i) => {
    const t = new Date(start + i * 10_000).toISOString().replace(".000Z", "Z");
    return `<Trackpoint><Time>${t}</Time><DistanceMeters>${i * 80}</DistanceMeters><HeartRateBpm><Value>${120 + i}</Value></HeartRateBpm></Trackpoint>`;
  }).join("");
  const begin = new Date(start).toISOString().replace(".000Z", "Z");
  return Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?><TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"><Activities><Activity Sport="Biking"><Id>${begin}</Id><Lap StartTime="${begin}"><TotalTimeSeconds>290</TotalTimeSeconds><DistanceMeters>2320</DistanceMeters><Calories>40</Calories><Intensity>Active</Intensity><TriggerMethod>Manual</TriggerMethod><Track>${points}</Track></Lap></Activity></Activities></TrainingCenterDatabase>`,
  );
}

test("GPX is offered only for an activity with positions, and an activity deleted elsewhere is said to be gone in words, without its id", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Lou");
  try {
    await page.goto("/activities");
    await page.getByLabel("Choose files").setInputFiles([
      { name: GPX, mimeType: "application/gpx+xml", buffer: readFileSync(path.join(fixtures, GPX)) },
      { name: "trainer.tcx", mimeType: "application/vnd.garmin.tcx+xml", buffer: indoorRideTcx() },
    ]);
    const row = (name: string) => page.getByTestId("upload-row").filter({ hasText: name });
    for (const name of [GPX, "trainer.tcx"]) {
      await expect(page.getByRole("progressbar", { name: `${name} upload progress` })).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
    }
    const runHref = (await row(GPX).getByRole("link").getAttribute("href"))!;

    // The ride on a trainer recorded no position: no GPX track to offer.
    await row("trainer.tcx").getByRole("link").click();
    await expect(page.getByRole("heading", { name: "Charts" })).toBeVisible();
    await expect(page.getByRole("img", { name: "Route" })).toHaveCount(0);
    await page.getByRole("button", { name: "Download" }).click();
    const formats = page.getByRole("list", { name: "Download formats" });
    await expect(formats.getByRole("link", { name: "TCX", exact: true })).toBeVisible();
    await expect(formats.getByRole("link", { name: "FIT", exact: true })).toBeVisible();
    await expect(formats.getByRole("link", { name: "GPX", exact: true })).toHaveCount(0);
    await page.keyboard.press("Escape");

    // The ride, deleted in another tab while its form is open here: the form says so, and
    // Cancel shows the page without it, not the ride as it was.
    const rideHref = page.url().slice(new URL(page.url()).origin.length);
    await page.getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Name").fill("Renamed ride");
    expect(await page.evaluate(async (href) => (await fetch(`/api/console${href}`, { method: "DELETE" })).status, rideHref)).toBe(200);
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByText("This activity is not here any more: it was deleted, so the change could not be saved.")).toBeVisible();
    await expect(page.getByText(/act_\w+ was not found/)).toHaveCount(0);
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect(page.getByText("This activity is not here: it was deleted, or the address is wrong.")).toBeVisible();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Activity not found");
    // "Edit", where the keyboard would go back to, went with the ride: it goes on from the heading.
    await expect(page.getByRole("heading", { level: 1 })).toBeFocused();
    await expect(page.getByLabel("Headline numbers")).toHaveCount(0);
    await expect(page.getByRole("heading", { name: "Charts" })).toHaveCount(0);
    await expect(page.getByRole("button", { name: "Edit" })).toHaveCount(0);

    // The run, deleted in another tab while its page is open here, on a phone.
    await page.setViewportSize({ width: 375, height: 740 });
    await page.goto(runHref);
    await expect(page.getByRole("img", { name: "Route" })).toBeVisible();
    // Each chart's legend wraps to two rows on a phone; its box grows with it, so the cursor's
    // values (the last row) are not clipped.
    const charts = page.getByRole("img", { name: / against (time|distance)/ });
    await expect(charts.first().locator(".u-legend")).toBeVisible();
    for (const chart of await charts.all()) {
      const [box, legend] = await Promise.all([chart.boundingBox(), chart.locator(".u-legend").boundingBox()]);
      expect(legend!.y + legend!.height).toBeLessThanOrEqual(box!.y + box!.height + 0.5);
    }
    const deleted = await page.evaluate(async (href) => (await fetch(`/api/console${href}`, { method: "DELETE" })).status, runHref);
    expect(deleted).toBe(200);

    await page.getByRole("button", { name: "Download" }).click();
    await page.getByRole("link", { name: "FIT", exact: true }).click();
    const gone = page.getByText("This activity is not here any more: it was deleted, so there is nothing to download.");
    await expect(gone).toBeVisible();
    // Inside the phone's screen, not hanging off its left edge under a button near the middle.
    const notice = (await gone.boundingBox())!;
    expect(notice.x).toBeGreaterThanOrEqual(0);
    expect(notice.x + notice.width).toBeLessThanOrEqual(375);
    await expect(page.getByText(/act_\w+ was not found/)).toHaveCount(0);
    // Put away, the refusal leaves a page that knows the run is gone.
    await page.keyboard.press("Escape");
    await expect(gone).toHaveCount(0);
    await expect(page.getByText("This activity is not here: it was deleted, or the address is wrong.")).toBeVisible();
    // "Download" went with the run: the keyboard goes on from the heading that says so.
    await expect(page.getByRole("heading", { level: 1, name: "Activity not found" })).toBeFocused();
    await expect(page.getByRole("img", { name: "Route" })).toHaveCount(0);
    await expect(page.getByRole("button", { name: "Download" })).toHaveCount(0);
  } finally {
    await context.close();
  }
});

test("a coach reaches a team member's activities from the roster, sees whose activity it is, may download it, and neither edits nor deletes it", async ({ browser }) => {
  // Ava, on Cora's team (the demo world), uploads a run of her own.
  const athlete = await browser.newContext();
  const coach = await browser.newContext();
  try {
    const page = await athlete.newPage();
    await signIn(page, "ava@example.com");
    await page.goto("/activities");
    const name = `coach-view-${Date.now()}.gpx`;
    await page.getByLabel("Choose files").setInputFiles({ name, mimeType: "application/gpx+xml", buffer: uniqueRun() });
    await expect(page.getByRole("progressbar", { name: `${name} upload progress` })).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
    const href = (await page.getByTestId("upload-row").filter({ hasText: name }).getByRole("link").getAttribute("href"))!;

    const view = await coach.newPage();
    await signIn(view, "cora@example.com");
    // From the team's roster to Ava's activities, and to this one.
    await view.goto("/teams");
    await view.getByRole("link", { name: "Ava Lind" }).first().click();
    await expect(view.getByRole("heading", { level: 1, name: "Ava Lind’s activities" })).toBeVisible();
    await expect(view).toHaveTitle("Ava Lind’s activities · Athlete Activity Service");
    // The route's static title, applied after the page's own (as Next.js may on a client-side
    // navigation, which once left "Athlete" standing), gives way to it.
    await view.evaluate(() => {
      document.title = "Athlete · Athlete Activity Service";
    });
    await expect(view).toHaveTitle("Ava Lind’s activities · Athlete Activity Service");
    // The run is dated 2024: Ava's newer activities come first, 20 at a time.
    const link = view.getByRole("list", { name: "Ava Lind’s activities" }).locator(`a[href="${href}"]`);
    for (let page = 0; page < 20 && (await link.count()) === 0; page++) {
      const more = view.getByRole("button", { name: "Load more" });
      const shown = await view.getByRole("list", { name: "Ava Lind’s activities" }).getByRole("listitem").count();
      await more.click();
      await expect(view.getByRole("list", { name: "Ava Lind’s activities" }).getByRole("listitem")).not.toHaveCount(shown);
    }
    await link.click();
    await expect(view).toHaveURL(href);
    await expect(view.getByRole("heading", { level: 1, name: "Coach view run" })).toBeVisible();
    // Her name's title went with her list.
    await expect(view).not.toHaveTitle(/Ava Lind’s activities/);
    await expect(view.getByText("Ava Lind’s activity", { exact: false })).toBeVisible();
    // Back is to Ava's activities, reached from the coach's teams: her activity is in no list of the coach's own.
    await expect(view.getByRole("link", { name: "← Ava Lind’s activities" })).toHaveAttribute("href", /^\/teams\/athletes\/ath_/);
    await expect(view.getByRole("link", { name: "← All activities" })).toHaveCount(0);
    await expect(view.getByRole("button", { name: "Edit" })).toHaveCount(0);
    await expect(view.getByRole("button", { name: "Delete" })).toHaveCount(0);

    await view.getByRole("button", { name: "Download" }).click();
    const downloading = view.waitForEvent("download");
    await view.getByRole("link", { name: "GPX", exact: true }).click();
    expect(readFileSync((await (await downloading).path())!, "utf8")).toContain("<trkpt");
  } finally {
    await athlete.close();
    await coach.close();
  }
});

/** A short GPX run whose start is this moment's, so no run of Ava's is a duplicate of it. */
function uniqueRun(): Buffer {
  const start = Date.UTC(2024, 0, 1) + (Date.now() % 10_000_000) * 1000;
  const points = Array.from({ length: 30 }, (_, i) => {
    const t = new Date(start + i * 10_000).toISOString().replace(".000Z", "Z");
    return `<trkpt lat="${(59.91 + i * 0.0003).toFixed(5)}" lon="10.75"><ele>12</ele><time>${t}</time></trkpt>`;
  }).join("");
  return Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?><gpx version="1.1" creator="e2e" xmlns="http://www.topografix.com/GPX/1/1"><trk><name>Coach view run</name><type>running</type><trkseg>${points}</trkseg></trk></gpx>`,
  );
}

test("a file with hundreds of laps shows the first 50 until the athlete asks for all, from one button that keeps the focus", async ({ browser }) => {
  const { buildFit, rideRecords } = await import("../lib/files/testing/fit-files");
  const laps = Array.from({ length: 120 }, (_, i) => ({ start: i * 10, elapsed: 10, distance: 80 }));
  const bytes = Buffer.from(buildFit([{ sport: "cycling", start: 0, elapsed: 1_200, records: rideRecords(0, 1_200), laps }]));
  const { page, context } = await signUpNewPerson(browser, "Lapo");
  try {
    await page.goto("/activities");
    await dropFiles(page, [{ name: "laps.fit", bytes, type: "application/octet-stream" }]);
    const row = page.getByTestId("upload-row").filter({ hasText: "laps.fit" });
    await expect(page.getByRole("progressbar", { name: "laps.fit upload progress" })).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
    await row.getByRole("link").click();
    const table = page.getByRole("table", { name: "Laps" });
    await expect(table.locator("tbody tr")).toHaveCount(50);
    const more = page.getByRole("button", { name: "Show all 120 laps" });
    await more.click();
    await expect(table.locator("tbody tr")).toHaveCount(120);
    const fewer = page.getByRole("button", { name: "Show the first 50 laps" });
    await expect(fewer).toBeFocused();
    await fewer.click();
    await expect(table.locator("tbody tr")).toHaveCount(50);
  } finally {
    await context.close();
  }
});
