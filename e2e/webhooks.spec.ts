import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { expect, test, type APIRequestContext, type Browser, type Page } from "@playwright/test";
import { verifyWebhookSignature } from "../lib/webhooks/signature";
import { authorizeLink, bearer, createToken, signIn, signUpNewPerson } from "./helpers";

// The webhook journey in a real browser: a developer subscribes an endpoint for the Demo
// Training Log app, an athlete who authorized the app records an activity, the delivery
// arrives signed and shows in the log, and the developer redelivers it.


type Received = { headers: http.IncomingHttpHeaders; body: string };

/**
 * The developer's endpoint on loopback: answers the handshake (only with the token `verifyToken()`
 * names, when it names one, as a Strava-style receiver checks it), records every delivery
 * (answering `status(body)`, 204 by default, once it is known: a promise holds the answer back).
 */
async function endpoint(status: (body: string) => number | Promise<number> = () => 204, verifyToken: () => string | null = () => null) {
  const deliveries: Received[] = [];
  const handshakes: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method === "GET") {
      handshakes.push(url.searchParams);
      const expected = verifyToken();
      if (expected !== null && url.searchParams.get("hub.verify_token") !== expected) return void res.writeHead(403).end("wrong verify token");
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ "hub.challenge": url.searchParams.get("hub.challenge") }));
      return;
    }
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      deliveries.push({ headers: req.headers, body });
      void Promise.resolve(status(body)).then((s) => res.writeHead(s).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/aas-hooks`,
    deliveries,
    handshakes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The developer of Demo Training Log signed in on its webhooks page, in a context of their own. */
async function developerOnWebhooks(browser: Browser) {
  const dev = await browser.newContext();
  const page = await dev.newPage();
  await signIn(page, "dev@example.com");
  await page.goto("/developers/apps/demo-training-log/webhooks");
  return { dev, page };
}

/** A client-credentials token of Demo Training Log, as the app's own code gets one. */
async function demoAppToken(request: APIRequestContext) {
  const res = await request.post("/oauth/token", {
    headers: { authorization: `Basic ${Buffer.from("demo-training-log:aas_cs_DemoTrainingLogSecret00000000001v3hLV").toString("base64")}` },
    form: { grant_type: "client_credentials" },
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Disables the demo app's endpoint at `url` over the API, as the app's own code would. */
async function disableOverApi(request: APIRequestContext, url: string) {
  const token = await demoAppToken(request);
  const subs = (await (await request.get("/v1/app/webhooks?limit=100", { headers: bearer(token) })).json()) as { data: { id: string; url: string }[] };
  const id = subs.data.find((s) => s.url === url)!.id;
  expect((await request.patch(`/v1/app/webhooks/${id}`, { headers: bearer(token), data: { status: "disabled" } })).status()).toBe(200);
  return id;
}

/** Adds an endpoint at a fresh path of `hooks` on the webhooks page, through its handshake, and closes the secret; its list item. */
async function addEndpoint(page: Page, hooks: { url: string }, verifyToken?: string) {
  await page.getByRole("button", { name: "Add endpoint" }).click();
  const url = `${hooks.url}/${randomBytes(3).toString("hex")}`;
  await page.getByLabel("Endpoint URL").fill(url);
  if (verifyToken) await page.getByLabel("Verify token (optional)").fill(verifyToken);
  await page.getByRole("button", { name: "Add endpoint" }).click();
  await expect(page.getByText(`Verified: ${url} answered the handshake`)).toBeVisible();
  await page.getByRole("button", { name: "Done", exact: true }).click();
  return { url, item: page.getByRole("listitem", { name: url }) };
}

test("a developer subscribes an endpoint, an athlete's new activity is delivered signed and logged, and the developer redelivers it", async ({
  browser,
  request,
  baseURL,
}) => {
  const hooks = await endpoint();
  try {
    // The developer adds the endpoint on the app's webhooks page; the handshake runs at once.
    const dev = await browser.newContext();
    const devPage = await dev.newPage();
    await signIn(devPage, "dev@example.com");
    await devPage.goto("/developers/apps/demo-training-log");
    await devPage.getByRole("link", { name: "Webhooks" }).click();
    await expect(devPage).toHaveURL(/\/developers\/apps\/demo-training-log\/webhooks$/);
    await expect(devPage.getByRole("heading", { name: "Webhooks of Demo Training Log" })).toBeVisible();
    await devPage.getByRole("button", { name: "Add endpoint" }).click();
    await devPage.getByLabel("Endpoint URL").fill(hooks.url);
    await expect(devPage.getByRole("checkbox", { name: /activity\.created/ })).toBeChecked();
    await devPage.getByRole("button", { name: "Add endpoint" }).click();
    await expect(devPage.getByText(`Verified: ${hooks.url} answered the handshake`)).toBeVisible();
    expect(hooks.handshakes).toHaveLength(1);
    expect(hooks.handshakes[0]!.get("hub.mode")).toBe("subscribe");
    const secret = (await devPage.getByTestId("signing-secret").textContent())!.trim();
    expect(secret).toMatch(/^whsec_[0-9A-Za-z]{38}$/);
    await devPage.getByRole("button", { name: "Done", exact: true }).click();
    const item = devPage.getByRole("listitem", { name: hooks.url });
    await expect(item).toContainText("Active");
    await expect(item.getByTestId("consecutive-failures")).toHaveText("0 consecutive failures");

    // An athlete authorizes the app to read activities, then records one with a token.
    const athlete = await signUpNewPerson(browser, "Iris");
    await athlete.page.goto(authorizeLink("demo-training-log", `${baseURL}/demo/callback`, ["activities.read"]).url);
    await athlete.page.getByRole("button", { name: "Allow" }).click();
    await athlete.page.waitForURL(/\/demo\/callback\?/);
    const pat = await createToken(athlete.page, "webhook journey", ["activities.write"]);
    const created = await request.post("/v1/athletes/me/activities", {
      headers: bearer(pat),
      data: { name: "Harbour loop", sport_type: "run", start_local: "2026-03-01T07:30:00", elapsed_time_s: 1800, distance_m: 5000 },
    });
    expect(created.status(), await created.text()).toBe(201);
    const activity = (await created.json()) as { id: string; athlete_id: string };

    // The delivery arrives: the thin event, signed with the secret shown once.
    const mine = () => hooks.deliveries.filter((d) => (JSON.parse(d.body) as { object_id: string }).object_id === activity.id);
    await expect.poll(() => mine().length, { timeout: 15_000 }).toBe(1);
    const first = mine()[0]!;
    const event = JSON.parse(first.body) as Record<string, string>;
    expect(Object.keys(event).sort()).toEqual(["athlete_id", "id", "object_id", "object_type", "occurred_at", "type"]);
    expect(event).toMatchObject({ type: "activity.created", athlete_id: activity.athlete_id, object_type: "activity" });
    expect(first.headers["service-event-id"]).toBe(event.id);
    expect(verifyWebhookSignature(first.body, first.headers["service-signature"] as string, secret)).toMatchObject({ ok: true });

    // The developer finds it in the log, open from the start, and opens it: the request sent and the answer.
    await expect(item.getByRole("button", { name: "Delivery log" })).toHaveAttribute("aria-expanded", "true");
    const row = item.getByRole("listitem", { name: `Delivery ${first.headers["service-delivery-id"]}` });
    await expect(row).toContainText(event.id!);
    await expect(row).toContainText("succeeded");
    await row.getByRole("button", { name: new RegExp(event.id!) }).click();
    const attempt = row.getByRole("listitem", { name: "Attempt 1" });
    await expect(attempt).toContainText("Status 204");
    await expect(attempt).toContainText(`Service-Event-Id: ${event.id}`);
    await expect(attempt).toContainText(first.body);
    // The event and the answer scroll in their boxes: each is a named region the keyboard reaches.
    await expect(row.getByRole("region", { name: "Event JSON, scrollable" })).toContainText(event.id!);
    await expect(row.getByRole("region", { name: "Event JSON, scrollable" })).toHaveAttribute("tabindex", "0");
    await expect(attempt.getByRole("region", { name: "Attempt 1 response body, scrollable" })).toHaveAttribute("tabindex", "0");

    // Filters: it is among the succeeded, not the failed.
    await item.getByRole("button", { name: "Failed", exact: true }).click();
    await expect(item.getByText("No failed deliveries.")).toBeVisible();
    await item.getByRole("button", { name: "Succeeded", exact: true }).click();
    await expect(row).toBeVisible();

    // "Redeliver": the same event arrives again, with the same id, and the log shows attempt 2.
    await item.getByRole("button", { name: "All", exact: true }).click();
    await row.getByRole("button", { name: "Redeliver" }).click();
    await expect(row.getByText("Queued again")).toBeVisible();
    await expect.poll(() => mine().length, { timeout: 15_000 }).toBe(2);
    const second = mine()[1]!;
    expect(JSON.parse(second.body)).toEqual(event);
    expect(second.headers["service-event-id"]).toBe(event.id);
    expect(second.headers["service-delivery-id"]).toBe(first.headers["service-delivery-id"]);
    expect(verifyWebhookSignature(second.body, second.headers["service-signature"] as string, secret)).toMatchObject({ ok: true });
    await expect(row.getByRole("listitem", { name: "Attempt 2" })).toContainText("Status 204", { timeout: 10_000 });

    await athlete.context.close();
    await dev.close();
  } finally {
    await hooks.close();
  }
});

test("a delivery that failed because the athlete disconnected the app says so in the developer's log", async ({ browser, request, baseURL }) => {
  // The endpoint fails this athlete's events, so their activity's delivery waits for a retry when
  // they disconnect. Known by the athlete, set before the activity is written: its delivery can
  // arrive before the test has read the POST's answer.
  let athleteId = "";
  let activityId = "";
  const hooks = await endpoint((body) => ((JSON.parse(body) as { athlete_id: string }).athlete_id === athleteId ? 500 : 204));
  try {
    const { dev, page: devPage } = await developerOnWebhooks(browser);
    const { url, item } = await addEndpoint(devPage, hooks);

    const athlete = await signUpNewPerson(browser, "Noor");
    await athlete.page.goto(authorizeLink("demo-training-log", `${baseURL}/demo/callback`, ["activities.read"]).url);
    await athlete.page.getByRole("button", { name: "Allow" }).click();
    await athlete.page.waitForURL(/\/demo\/callback\?/);
    const pat = await createToken(athlete.page, "withdrawn delivery", ["athlete.read", "activities.write"]);
    athleteId = ((await (await request.get("/v1/athletes/me", { headers: bearer(pat) })).json()) as { id: string }).id;
    const created = await request.post("/v1/athletes/me/activities", {
      headers: bearer(pat),
      data: { name: "Canal loop", sport_type: "run", start_local: "2026-03-02T07:30:00", elapsed_time_s: 1500 },
    });
    expect(created.status(), await created.text()).toBe(201);
    activityId = ((await created.json()) as { id: string }).id;
    const mine = () => hooks.deliveries.find((d) => (JSON.parse(d.body) as { object_id: string }).object_id === activityId);
    await expect.poll(() => mine() !== undefined, { timeout: 15_000 }).toBe(true);
    const deliveryId = mine()!.headers["service-delivery-id"] as string;

    // Answered 500, it waits for its retry; the athlete disconnects the app meanwhile.
    await athlete.page.goto("/settings/apps");
    await athlete.page.getByRole("listitem", { name: "Demo Training Log" }).getByRole("button", { name: "Disconnect" }).click();
    await expect(athlete.page.getByText("Disconnected Demo Training Log")).toBeVisible();

    // The log shows it failed, and the delivery says why: no further attempt will come.
    await item.getByRole("button", { name: "Failed", exact: true }).click();
    const row = item.getByRole("listitem", { name: `Delivery ${deliveryId}` });
    await expect(row).toContainText("failed", { timeout: 10_000 });
    await row.getByRole("button", { name: /activity\.created/ }).click();
    await expect(row).toContainText("Failed: the athlete disconnected the app, so their events no longer go to it.");
    await expect(row.getByRole("listitem", { name: "Attempt 1" })).toContainText("Status 500");

    await item.getByRole("button", { name: "Delete" }).click();
    await expect(devPage.getByRole("listitem", { name: url })).toHaveCount(0);
    await athlete.context.close();
    await dev.close();
  } finally {
    await hooks.close();
  }
});

test("a developer rotates an endpoint's signing secret and deletes the endpoint, each with one click", async ({ browser }) => {
  const hooks = await endpoint();
  try {
    const { dev, page } = await developerOnWebhooks(browser);
    // The form opens in the button's place with the focus in its first field; Cancel gives the
    // focus back to the button.
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect(page.getByLabel("Endpoint URL")).toBeFocused();
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect(page.getByRole("button", { name: "Add endpoint" })).toBeFocused();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const url = `${hooks.url}/${randomBytes(3).toString("hex")}`;
    await page.getByLabel("Endpoint URL").fill(url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect(page.getByText(`Verified: ${url} answered the handshake`)).toBeVisible();
    const first = (await page.getByTestId("signing-secret").textContent())!.trim();
    // "Done" goes away with the secret: the new endpoint's item takes the focus, not the page's top.
    const item = page.getByRole("listitem", { name: url });
    await expect(item).toBeVisible();
    await page.getByRole("button", { name: "Done", exact: true }).click();
    await expect(page.getByTestId("signing-secret")).toHaveCount(0);
    await expect(item).toBeFocused();

    // CONTRACT §9 names both actions; a native confirm() would leave a journey clicking them
    // with nothing happening (Playwright dismisses dialogs).
    await item.getByRole("button", { name: "Rotate secret" }).click();
    const rotated = page.getByTestId("signing-secret");
    await expect(rotated).toBeVisible();
    const second = (await rotated.textContent())!.trim();
    expect(second).toMatch(/^whsec_[0-9A-Za-z]{38}$/);
    expect(second).not.toBe(first);
    // The page says what happened, above the new secret, and the focus goes there (it stayed on
    // the button, far below the secret shown once). A second rotation says it again.
    const said = page.getByText(`Rotated the signing secret of ${url}.`);
    await expect(said.locator("xpath=ancestor::*[@tabindex='-1'][1]")).toBeFocused();
    await item.getByRole("button", { name: "Rotate secret" }).click();
    await expect(rotated).not.toHaveText(second);
    await expect(said.locator("xpath=ancestor::*[@tabindex='-1'][1]")).toBeFocused();
    // …and after the rotated secret's "Done", the focus is back on the endpoint.
    await page.getByRole("button", { name: "Done", exact: true }).click();
    await expect(page.getByTestId("signing-secret")).toHaveCount(0);
    await expect(item).toBeFocused();

    await item.getByRole("button", { name: "Delete" }).click();
    await expect(page.getByRole("listitem", { name: url })).toHaveCount(0);
    // The page says so, and no longer says the endpoint is verified and active.
    await expect(page.getByText(`Deleted the endpoint ${url}`)).toBeVisible();
    await expect(page.getByText(`Verified: ${url}`)).toHaveCount(0);
    await page.reload();
    await expect(page.getByRole("heading", { name: "Webhooks of Demo Training Log" })).toBeVisible();
    await expect(page.getByRole("listitem", { name: url })).toHaveCount(0);
    await dev.close();
  } finally {
    await hooks.close();
  }
});

test("a URL already subscribed is refused on its field; re-enabling a disabled endpoint says so where the focus goes, its buttons gone with it", async ({ browser, request }) => {
  const hooks = await endpoint();
  try {
    const { dev, page } = await developerOnWebhooks(browser);
    const { url, item } = await addEndpoint(page, hooks);
    // The same URL again is refused on its field, which takes the focus: a second endpoint there
    // would receive every event twice.
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByLabel("Endpoint URL").fill(url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect(page.getByText(/The app already has an endpoint at this URL \(whs_\w+\): change its events instead\./)).toBeVisible();
    await expect(page.getByLabel("Endpoint URL")).toBeFocused();
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect(page.getByRole("listitem", { name: url })).toHaveCount(1);
    // The app disables it over the API, as its own code would.
    const token = (await (
      await request.post("/oauth/token", {
        headers: { authorization: `Basic ${Buffer.from("demo-training-log:aas_cs_DemoTrainingLogSecret00000000001v3hLV").toString("base64")}` },
        form: { grant_type: "client_credentials" },
      })
    ).json()) as { access_token: string };
    const subs = (await (await request.get("/v1/app/webhooks?limit=100", { headers: bearer(token.access_token) })).json()) as { data: { id: string; url: string }[] };
    const id = subs.data.find((s) => s.url === url)!.id;
    expect((await request.patch(`/v1/app/webhooks/${id}`, { headers: bearer(token.access_token), data: { status: "disabled" } })).status()).toBe(200);
    await page.reload();
    await expect(item.getByText("Disabled by the app's developer. Nothing is sent")).toBeVisible();
    // A state shown on every load, not an outcome: no alert for a screen reader to interrupt with.
    await expect(item.getByRole("alert")).toHaveCount(0);
    await item.getByRole("button", { name: "Re-enable", exact: true }).click();
    await expect(item.getByRole("button", { name: "Send test event" })).toBeVisible();
    const said = item.getByText("Re-enabled after a fresh handshake. New events are delivered again.");
    await expect(said.locator("xpath=ancestor::*[@tabindex='-1'][1]")).toBeFocused();
    await dev.close();
  } finally {
    await hooks.close();
  }
});

test("a developer edits an endpoint's events and URL in place: a new URL answers the handshake first, one that does not changes nothing", async ({
  browser,
}) => {
  const hooks = await endpoint();
  try {
    const { dev, page } = await developerOnWebhooks(browser);
    const { url, item } = await addEndpoint(page, hooks);
    await expect(item).toContainText("activity.created");

    // Cancel gives the focus back to Edit.
    await item.getByRole("button", { name: "Edit" }).click();
    await expect(item.getByLabel("Endpoint URL")).toBeFocused();
    await item.getByRole("button", { name: "Cancel" }).click();
    await expect(item.getByRole("button", { name: "Edit" })).toBeFocused();

    // A URL nobody answers at: the handshake fails, and the endpoint stays as it was.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/gone`;
    await new Promise((resolve) => closed.close(resolve));
    await item.getByRole("button", { name: "Edit" }).click();
    await item.getByLabel("Endpoint URL").fill(deadUrl);
    await item.getByRole("button", { name: "Save" }).click();
    await expect(item.getByText("The new URL did not complete the handshake; nothing was changed.")).toBeVisible();
    await item.getByRole("button", { name: "Cancel" }).click();
    await expect(page.getByRole("listitem", { name: url })).toBeVisible();

    // Events and a URL that answers: saved, and the item now names the new URL.
    const moved = `${hooks.url}/${randomBytes(3).toString("hex")}`;
    const handshakesBefore = hooks.handshakes.length;
    await item.getByRole("button", { name: "Edit" }).click();
    await item.getByLabel("Endpoint URL").fill(moved);
    await item.getByRole("checkbox", { name: /^activity\.created/ }).uncheck();
    await item.getByRole("button", { name: "Save" }).click();
    const movedItem = page.getByRole("listitem", { name: moved });
    await expect(movedItem.getByText("Saved.")).toBeVisible();
    // The events it takes, not its whole item: another journey's activity.created, delivered to
    // every endpoint of the demo app while this one ran, shows in the delivery log there.
    await expect(movedItem.getByText("activity.updated · activity.deleted", { exact: true })).toBeVisible();
    expect(hooks.handshakes.length).toBe(handshakesBefore + 1);

    // Saving what is there changes nothing, and says so.
    await movedItem.getByRole("button", { name: "Edit" }).click();
    await movedItem.getByRole("button", { name: "Save" }).click();
    await expect(movedItem.getByText("Nothing changed.")).toBeVisible();

    await movedItem.getByRole("button", { name: "Delete" }).click();
    await expect(page.getByRole("listitem", { name: moved })).toHaveCount(0);
    await dev.close();
  } finally {
    await hooks.close();
  }
});

test("a verify token typed in Edit is kept for the next handshake: a disabled endpoint whose receiver changed its token is re-enabled", async ({ browser, request }) => {
  let expected = "alpha-token";
  const hooks = await endpoint(undefined, () => expected);
  try {
    const { dev, page } = await developerOnWebhooks(browser);
    const { url, item } = await addEndpoint(page, hooks, expected);
    await disableOverApi(request, url);
    await page.reload();
    await expect(item.getByRole("button", { name: "Re-enable", exact: true })).toBeVisible();
    // CONTRACT's two names, §9's "re-enable" and §7's "Re-enable and redeliver", one button each.
    await expect(item.getByRole("button", { name: "Re-enable", exact: true })).toHaveCount(1);
    await expect(item.getByRole("button", { name: "Re-enable and redeliver", exact: true })).toBeVisible();

    // The receiver now checks another token. Typed in Edit with nothing else changed, it is saved…
    expected = "beta-token";
    await item.getByRole("button", { name: "Edit" }).click();
    await item.getByLabel("Verify token (optional)").fill(expected);
    await item.getByRole("button", { name: "Save" }).click();
    await expect(item.getByText("Saved. The new verify token is sent in the endpoint's next handshake")).toBeVisible();
    await expect(item.getByText("Nothing changed.")).toHaveCount(0);

    // …and Re-enable's handshake sends it, so the endpoint answers and is active again.
    await item.getByRole("button", { name: "Re-enable", exact: true }).click();
    await expect(item.getByText("Re-enabled after a fresh handshake. New events are delivered again.")).toBeVisible();
    await expect(item.getByRole("button", { name: "Send test event" })).toBeVisible();
    expect(hooks.handshakes.at(-1)!.get("hub.verify_token")).toBe(expected);
    await item.getByRole("button", { name: "Delete" }).click();
    await expect(page.getByRole("listitem", { name: url })).toHaveCount(0);
    await dev.close();
  } finally {
    await hooks.close();
  }
});

test("a developer disables an active endpoint with its Disable button, told so where the focus goes, and re-enables it", async ({ browser }) => {
  const hooks = await endpoint();
  try {
    const { dev, page } = await developerOnWebhooks(browser);
    const { url, item } = await addEndpoint(page, hooks);
    await item.getByRole("button", { name: "Disable", exact: true }).click();
    const said = item.getByText("Disabled. Nothing is sent to it until it is re-enabled; deliveries that were waiting are marked failed.");
    await expect(said.locator("xpath=ancestor::*[@tabindex='-1'][1]")).toBeFocused();
    await expect(item.getByText("Disabled by the app's developer. Nothing is sent")).toBeVisible();
    await expect(item.getByRole("button", { name: "Disable", exact: true })).toHaveCount(0);
    await expect(item.getByRole("button", { name: "Send test event" })).toHaveCount(0);

    // Re-enable stays as it was: a fresh handshake, said where the focus goes.
    const handshakes = hooks.handshakes.length;
    await item.getByRole("button", { name: "Re-enable", exact: true }).click();
    await expect(item.getByText("Re-enabled after a fresh handshake. New events are delivered again.")).toBeVisible();
    await expect(item.getByRole("button", { name: "Disable", exact: true })).toBeVisible();
    expect(hooks.handshakes.length).toBe(handshakes + 1);
    await item.getByRole("button", { name: "Delete" }).click();
    await expect(page.getByRole("listitem", { name: url })).toHaveCount(0);
    await dev.close();
  } finally {
    await hooks.close();
  }
});

test("an endpoint deleted in another tab: an action on it there is answered 404, the page says so and asks for the list again", async ({ browser }) => {
  const hooks = await endpoint();
  try {
    const { dev, page } = await developerOnWebhooks(browser);
    const { url, item } = await addEndpoint(page, hooks);
    const other = await dev.newPage();
    await other.goto("/developers/apps/demo-training-log/webhooks");
    const stale = other.getByRole("listitem", { name: url });
    await expect(stale).toBeVisible();

    await item.getByRole("button", { name: "Delete" }).click();
    await expect(page.getByRole("listitem", { name: url })).toHaveCount(0);

    await stale.getByRole("button", { name: "Rotate secret" }).click();
    const said = other.getByText(`The endpoint ${url} is no longer there: it was deleted elsewhere`);
    await expect(said.locator("xpath=ancestor::*[@tabindex='-1'][1]")).toBeFocused();
    // Asked again at once, not at the list's next 10-second refresh.
    await expect(stale).toHaveCount(0, { timeout: 5_000 });
    await expect(other.getByTestId("signing-secret")).toHaveCount(0);
    await dev.close();
  } finally {
    await hooks.close();
  }
});

test("Load older deliveries: the focus goes back to it while there are more, and to the first row it loaded once it goes away", async ({ browser, request }) => {
  const hooks = await endpoint();
  try {
    // An endpoint of metric.created alone, which no journey sends to the demo app: its log holds only the test events sent here.
    const token = await demoAppToken(request);
    const url = `${hooks.url}/${randomBytes(3).toString("hex")}`;
    const created = await request.post("/v1/app/webhooks", { headers: bearer(token), data: { url, events: ["metric.created"] } });
    expect(created.status(), await created.text()).toBe(201);
    const { id } = (await created.json()) as { id: string };
    for (let i = 0; i < 26; i++) {
      const res = await request.post(`/v1/app/webhooks/${id}/send-test-event`, { headers: bearer(token) });
      expect(res.status(), await res.text()).toBe(202);
    }

    const { dev, page } = await developerOnWebhooks(browser);
    const item = page.getByRole("listitem", { name: url });
    const log = item.getByRole("list", { name: "Deliveries" });
    await expect(log.locator(":scope > li")).toHaveCount(25);
    const more = item.getByRole("button", { name: "Load older deliveries" });
    await more.focus();
    await page.keyboard.press("Enter");
    // The last page: the button goes away and the oldest delivery, the first one it loaded, takes the focus.
    await expect(log.locator(":scope > li")).toHaveCount(26);
    await expect(more).toHaveCount(0);
    await expect(log.locator(":scope > li").nth(25)).toBeFocused();
    expect(await page.evaluate(() => document.activeElement === document.body)).toBe(false);
    await item.getByRole("button", { name: "Delete" }).click();
    await expect(page.getByRole("listitem", { name: url })).toHaveCount(0);
    await dev.close();
  } finally {
    await hooks.close();
  }
});

test("Add endpoint and an endpoint's Rotate secret, clicked twice in the same instant, each act once", async ({ browser }) => {
  const hooks = await endpoint();
  try {
    const { dev, page } = await developerOnWebhooks(browser);
    const posts: string[] = [];
    page.on("request", (r) => void (r.method() === "POST" && r.url().includes("/api/console/apps/demo-training-log/webhooks") && posts.push(r.url())));
    const twice = (b: HTMLElement) => {
      b.click();
      b.click();
    };

    await page.getByRole("button", { name: "Add endpoint" }).click();
    const url = `${hooks.url}/${randomBytes(3).toString("hex")}`;
    await page.getByLabel("Endpoint URL").fill(url);
    await page.getByRole("button", { name: "Add endpoint" }).evaluate(twice);
    await expect(page.getByText(`Verified: ${url} answered the handshake`)).toBeVisible();
    await page.waitForTimeout(500); // time for a second request to show, had one been sent
    expect(posts).toHaveLength(1);
    expect(hooks.handshakes).toHaveLength(1);
    await page.getByRole("button", { name: "Done", exact: true }).click();

    const item = page.getByRole("listitem", { name: url });
    posts.length = 0;
    await item.getByRole("button", { name: "Rotate secret" }).evaluate(twice);
    await expect(page.getByText(`Rotated the signing secret of ${url}.`)).toBeVisible();
    await page.waitForTimeout(500); // time for a second request to show, had one been sent
    expect(posts.filter((u) => u.endsWith("/rotate-secret"))).toHaveLength(1);
    await page.getByRole("button", { name: "Done", exact: true }).click();
    await item.getByRole("button", { name: "Delete" }).click();
    await expect(page.getByRole("listitem", { name: url })).toHaveCount(0);
    await dev.close();
  } finally {
    await hooks.close();
  }
});

test("the edit form says every field's problem at once: a URL too long along with no events", async ({ browser }) => {
  const hooks = await endpoint();
  try {
    const { dev, page } = await developerOnWebhooks(browser);
    const { url, item } = await addEndpoint(page, hooks);
    await item.getByRole("button", { name: "Edit" }).click();
    await item.getByLabel("Endpoint URL").fill(`${hooks.url}/${"a".repeat(2100)}`);
    for (const box of await item.getByRole("checkbox").all()) await box.uncheck();
    await item.getByRole("button", { name: "Save" }).click();
    await expect(item.getByLabel("Endpoint URL")).toHaveAccessibleDescription(/Must be at most 2000 characters\./);
    await expect(item.getByRole("group", { name: "Events" })).toHaveAccessibleDescription(/Subscribe to at least one event type\./);
    await item.getByRole("button", { name: "Cancel" }).click();
    await item.getByRole("button", { name: "Delete" }).click();
    await expect(page.getByRole("listitem", { name: url })).toHaveCount(0);
    await dev.close();
  } finally {
    await hooks.close();
  }
});

test("a test event is said to be queued only while it is: the notice goes once its delivery is attempted or the endpoint disabled, and the failure count moves with the log", async ({
  browser,
  request,
}) => {
  // Test events are answered as `answer` says; `release` answers one held back.
  let answer: () => number | Promise<number> = () => 204;
  let release = (_status: number) => {};
  const hooks = await endpoint((body) => ((JSON.parse(body) as { type: string }).type === "webhook.test" ? answer() : 204));
  try {
    // An endpoint of metric.created alone, which no journey sends to the demo app: what reaches it is the test events sent here.
    const token = await demoAppToken(request);
    const url = `${hooks.url}/${randomBytes(3).toString("hex")}`;
    const created = await request.post("/v1/app/webhooks", { headers: bearer(token), data: { url, events: ["metric.created"] } });
    expect(created.status(), await created.text()).toBe(201);
    const { dev, page } = await developerOnWebhooks(browser);
    const item = page.getByRole("listitem", { name: url });
    const queued = item.getByText(/^Test event evt_\w+ queued; it appears in the delivery log\.$/);
    const failures = item.getByTestId("consecutive-failures");
    const row = (n: number) => item.getByRole("listitem", { name: `Delivery ${hooks.deliveries[n]!.headers["service-delivery-id"] as string}` });

    // Held by the endpoint, the first attempt has not ended: the event is still queued. Answered 2xx, it is not.
    answer = () => new Promise((resolve) => (release = resolve));
    await item.getByRole("button", { name: "Send test event" }).click();
    await expect(queued).toBeVisible();
    await expect.poll(() => hooks.deliveries.length, { timeout: 15_000 }).toBe(1);
    await expect(queued).toBeVisible();
    release(204);
    await expect(row(0)).toContainText("succeeded");
    await expect(queued).toHaveCount(0);
    await expect(failures).toHaveText("0 consecutive failures");

    // Answered 500: the log shows the failed attempt, and the header counts it (the log asks for
    // the list again when it sees an attempt; components/webhooks/shared.test.ts holds that rule).
    // Attempted, the event is no longer "queued".
    answer = () => 500;
    await item.getByRole("button", { name: "Send test event" }).click();
    await expect.poll(() => hooks.deliveries.length, { timeout: 15_000 }).toBe(2);
    await expect(row(1)).toContainText("HTTP 500");
    await expect(failures).toHaveText("1 consecutive failure");
    await expect(queued).toHaveCount(0);

    // A failing endpoint is probed by its oldest pending delivery alone (retried in about 10 s):
    // the next test event waits, queued, until the app disables the endpoint, which fails it.
    // The log sees its delivery fail, and the header says "Disabled" with it.
    await item.getByRole("button", { name: "Send test event" }).click();
    await expect(queued).toBeVisible();
    const third = /evt_\w+/.exec((await queued.textContent())!)![0];
    await disableOverApi(request, url);
    await expect(item.getByRole("listitem", { name: /^Delivery / }).filter({ hasText: third })).toContainText("failed");
    await expect(item.getByText("Disabled by the app's developer. Nothing is sent")).toBeVisible();
    await expect(queued).toHaveCount(0);

    await item.getByRole("button", { name: "Delete" }).click();
    await expect(page.getByRole("listitem", { name: url })).toHaveCount(0);
    await dev.close();
  } finally {
    release(204);
    await hooks.close();
  }
});
