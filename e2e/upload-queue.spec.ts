import { expect, test } from "@playwright/test";
import { signUpNewPerson } from "./helpers";

// Files dropped on /activities belong to the console, not to the page: an athlete who drops a
// folder and goes to another console page while the files are still waiting to be sent finds
// every one of them sent and processed on coming back. A status check refused for a moment (a
// rate limit) is asked again; a failed send is tried again from the keyboard.

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

test("status checks answered 429 are asked again after their Retry-After, and rows whose upload is gone give up their place to the rows behind", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Rhea");
  try {
    // Which upload is which file: read from each upload's 202 answer.
    const names = new Map<string, string>();
    await page.route("**/api/console/uploads", async (route) => {
      if (route.request().method() !== "POST") return route.continue();
      const name = /filename="([^"]+)"/.exec(route.request().postDataBuffer()?.toString("latin1") ?? "")?.[1] ?? "";
      const res = await route.fetch();
      const body = (await res.json()) as { id: string };
      names.set(body.id, name);
      await route.fulfill({ response: res, json: body });
    });
    // The console's limit is used up for the first 4 s of status checks; the uploads of the two
    // files picked first are gone (deleted elsewhere, say) whenever they are asked about.
    let limitedUntil = 0;
    let limited = 0;
    const gone = ["limit-1.gpx", "limit-2.gpx"];
    await page.route("**/api/console/uploads/*", async (route) => {
      const id = decodeURIComponent(new URL(route.request().url()).pathname.split("/").pop()!);
      if (limitedUntil === 0) limitedUntil = Date.now() + 4000;
      if (Date.now() < limitedUntil) {
        limited++;
        return route.fulfill({
          status: 429,
          headers: { "retry-after": "1", "content-type": "application/problem+json" },
          body: JSON.stringify({ status: 429, code: "rate_limited", title: "Too many requests", detail: "The console's 15-minute limit of 3000 requests is used up; retry in 1 s." }),
        });
      }
      if (gone.includes(names.get(id) ?? "")) {
        return route.fulfill({ status: 404, contentType: "application/problem+json", body: JSON.stringify({ status: 404, code: "not_found", title: "Not found", detail: `Upload ${id} was not found.` }) });
      }
      return route.continue();
    });

    await page.goto("/activities");
    const files = [1, 2, 3, 4, 5].map((day) => ({ name: `limit-${day}.gpx`, mimeType: "application/gpx+xml", buffer: gpxRun(10 + day) }));
    await page.getByLabel("Choose files").setInputFiles(files);

    // The rows asked about during the limit say so and keep asking; none is given up on.
    const bar = (name: string) => page.getByRole("progressbar", { name: `${name} upload progress` });
    const row = (name: string) => page.getByTestId("upload-row").filter({ hasText: name });
    await expect(page.getByText(/Could not learn how the upload went yet: the service was asked too often\. Asking again in 1 s\./).first()).toBeVisible({ timeout: 15_000 });
    expect(limited).toBeGreaterThan(0);
    // Once it is over, every file still there is done, the ones behind the gone ones too.
    for (const day of [3, 4, 5]) await expect(bar(`limit-${day}.gpx`)).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
    for (const name of gone) {
      await expect(bar(name)).toHaveAttribute("aria-valuetext", "Not known");
      await expect(row(name).getByText(`Could not learn how the upload went: Upload`)).toBeVisible();
      await expect(row(name).getByRole("button", { name: "Check again" })).toBeVisible();
    }
  } finally {
    await context.close();
  }
});

test("a failed send's \"Try again\" goes away as the file is sent again, and the keyboard goes on from its row", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Tove");
  try {
    let fail = true;
    await page.route("**/api/console/uploads", (route) => (fail && route.request().method() === "POST" ? route.abort("failed") : route.continue()));
    await page.goto("/activities");
    await page.getByLabel("Choose files").setInputFiles({ name: "again.gpx", mimeType: "application/gpx+xml", buffer: gpxRun(20) });
    const row = page.getByTestId("upload-row").filter({ hasText: "again.gpx" });
    const again = row.getByRole("button", { name: "Try again" });
    await expect(again).toBeVisible();
    fail = false;
    await again.focus();
    await page.keyboard.press("Enter");
    await expect(again).toHaveCount(0);
    await expect(row).toBeFocused();
    await expect(page.getByRole("progressbar", { name: "again.gpx upload progress" })).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
    await expect(row).toBeFocused();
  } finally {
    await context.close();
  }
});

test("a file whose answer was lost on the way back is made once when sent again: the retry is answered with the upload the first send made", async ({ browser }) => {
  const { page, context } = await signUpNewPerson(browser, "Lior");
  try {
    // The first send reaches the service and is made there; its answer never reaches the page.
    let lose = true;
    const made: string[] = [];
    const keys: (string | null)[] = [];
    await page.route("**/api/console/uploads", async (route) => {
      if (route.request().method() !== "POST") return route.continue();
      keys.push(await route.request().headerValue("idempotency-key"));
      const answer = await route.fetch();
      made.push(((await answer.json()) as { id: string }).id);
      if (lose) {
        lose = false;
        return route.abort("connectionreset");
      }
      return route.fulfill({ response: answer });
    });
    await page.goto("/activities");
    await page.getByLabel("Choose files").setInputFiles({ name: "lost.gpx", mimeType: "application/gpx+xml", buffer: gpxRun(24) });
    const row = page.getByTestId("upload-row").filter({ hasText: "lost.gpx" });
    await row.getByRole("button", { name: "Try again" }).click();
    await expect(page.getByRole("progressbar", { name: "lost.gpx upload progress" })).toHaveAttribute("aria-valuetext", "Done", { timeout: 30_000 });
    // One upload: the retry carried the first send's key and was answered with what it made.
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBeTruthy();
    expect(keys[1]).toBe(keys[0]);
    expect(made[1]).toBe(made[0]);
    await expect(row).not.toContainText("already uploaded");
    await page.goto("/activities");
    await expect(page.getByRole("link", { name: "Queue run 24" })).toHaveCount(1);
  } finally {
    await context.close();
  }
});
