import { expect, test } from "@playwright/test";
import { signUpNewPerson } from "./helpers";

// Files dropped on /activities belong to the console, not to the page: an athlete who drops a
// folder and goes to another console page while the files are still waiting to be sent finds
// every one of them sent and processed on coming back.

/** A small GPX run of its own: a distinct start, so no file is a duplicate of another. */
function gpxRun(day: number): Buffer {
  const start = Date.UTC(2025, 4, day, 6, 0, 0);
  const points = Array.from({ length: 30 }, (_, i) => {
    const t = new Date(start + i * 10_000).toISOString().replace(".000Z", "Z");
    return `<trkpt lat="${(59.91 + i * 0.0003).toFixed(5)}" lon="10.75"><ele>12</ele><time>${t}</time></trkpt>`;
  }).join("");
  return Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?><gpx version="1.1" creator="e2e" xmlns="http://www.topografix.com/GPX/1/1"><trk><name>Queue run ${day}</name><type>running</type><trkseg>${points}</trkseg></trk></gpx>`,
  );
}

test("files still waiting to be sent keep going while the athlete looks at another page", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Quinn");
  try {
    // Hold every upload at the browser until the athlete has left the page, so some are surely still waiting then.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let posted = 0;
    await page.route("**/api/console/uploads", async (route) => {
      if (route.request().method() !== "POST") return route.continue();
      posted++;
      await gate;
      await route.continue();
    });

    await page.goto("/activities");
    const files = [1, 2, 3, 4, 5].map((day) => ({ name: `queue-${day}.gpx`, b64: gpxRun(day).toString("base64") }));
    const dataTransfer = await page.evaluateHandle((list) => {
      const dt = new DataTransfer();
      for (const f of list) dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name, { type: "application/gpx+xml" }));
      return dt;
    }, files);
    const zone = page.getByTestId("upload-drop-zone");
    await zone.dispatchEvent("dragenter", { dataTransfer });
    await zone.dispatchEvent("drop", { dataTransfer });

    // Three go out at once; the other two wait their turn.
    await expect.poll(() => posted).toBe(3);
    const states = () => page.getByRole("progressbar", { name: /^queue-\d\.gpx upload progress$/ }).evaluateAll((bars) => bars.map((b) => b.getAttribute("aria-valuetext")));
    await expect.poll(async () => (await states()).filter((t) => t?.startsWith("Sending")).length).toBe(3);
    expect((await states()).filter((t) => t === "Waiting to send")).toHaveLength(2);

    // The athlete goes elsewhere in the console; the held requests go on meanwhile.
    const nav = page.getByRole("navigation", { name: "Console" });
    await nav.getByRole("link", { name: "Profile" }).click();
    await expect(page).toHaveURL(/\/settings\/profile$/);
    release();
    await expect.poll(() => posted, { timeout: 30_000 }).toBe(5);

    // Back on the list: every file is there, done, and every run is an activity.
    await nav.getByRole("link", { name: "Activities" }).click();
    await expect(page).toHaveURL(/\/activities$/);
    for (const f of files) {
      await expect(page.getByRole("progressbar", { name: `${f.name} upload progress` })).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
    }
    const list = page.getByRole("list", { name: "Activities" });
    for (const day of [1, 2, 3, 4, 5]) await expect(list.getByRole("link", { name: new RegExp(`Queue run ${day}\\b`) })).toBeVisible();
  } finally {
    await context.close();
  }
});

test("files chosen before the page's script has run are sent once it runs, not left in the input", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Hale");
  try {
    // A slow connection: the page's script is held back until the files are chosen.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await page.route("**/_next/static/chunks/**", async (route) => {
      await gate;
      await route.continue();
    });
    await page.goto("/activities", { waitUntil: "commit" });
    const chooser = page.getByLabel("Choose files");
    await chooser.waitFor({ state: "attached" });
    await chooser.setInputFiles([6, 7].map((day) => ({ name: `early-${day}.gpx`, mimeType: "application/gpx+xml", buffer: gpxRun(day) })));
    release();
    for (const day of [6, 7]) {
      await expect(page.getByRole("progressbar", { name: `early-${day}.gpx upload progress` })).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
    }
    const list = page.getByRole("list", { name: "Activities" });
    for (const day of [6, 7]) await expect(list.getByRole("link", { name: new RegExp(`Queue run ${day}\\b`) })).toBeVisible();
  } finally {
    await context.close();
  }
});
