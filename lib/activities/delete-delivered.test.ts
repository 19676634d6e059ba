import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { activities, oauthClients, oauthGrants, webhookDeliveries } from "../db/schema";
import { resetEnvForTests } from "../env";
import { newId } from "../ids";
import { issueAppAccessToken } from "../oauth/access-token";
import { AppEventList } from "../app-events/schemas";
import { setupApi } from "../testing/fixtures";
import { countRows } from "../testing/rows";
import { handshakeThen } from "../testing/webhook-receiver";
import { runnerForFile } from "../testing/webhook-runner";
import { verifyWebhookSignature } from "../webhooks/signature";
import { SubscriptionWithSecret } from "../webhooks/subscriptions/schemas";
import { eventsVisible } from "../testing/events-visible";

// `activity.deleted` through the real delivery engine: the event reaches an app although the
// activity it names is gone, and only an app whose grant carries activities.read.

process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
resetEnvForTests();

const api = setupApi();
const delivery = runnerForFile(api);

/** An app with a subscription to `activity.deleted` (handshake answered), and the athlete's grant to it. */
async function subscribedApp(athleteId: string, scopes: string[]) {
  const db = await api.db();
  const clientId = `del-${randomBytes(5).toString("hex")}`;
  const owner = await api.person();
  await db.insert(oauthClients).values({ clientId, ownerId: owner.id, name: "Deletions", kind: "confidential", secretHash: "x", redirectUris: ["https://d.example.com/cb"] });
  const token = (await issueAppAccessToken(db, { clientId, secretHash: "x" })).token;
  const rx = await delivery.receiver(handshakeThen());
  const created = await api.call(token, "POST", "/v1/app/webhooks", { body: { url: rx.url, events: ["activity.deleted"] } });
  expect(created.status, await created.clone().text()).toBe(201);
  const sub = SubscriptionWithSecret.parse(await created.json());
  await db.insert(oauthGrants).values({ id: newId("grt"), clientId, userId: athleteId, scopes });
  return { token, rx, sub };
}

describe("activity.deleted", () => {
  it("is delivered, signed, to an app whose grant carries activities.read, and listed in its events feed", async () => {
    const ava = await api.person();
    const reader = await subscribedApp(ava.id, ["activities.read"]);
    const profileOnly = await subscribedApp(ava.id, ["athlete.read"]);
    const id = newId("act");
    await (await api.db()).insert(activities).values({ id, athleteId: ava.id, name: "Ride", sportType: "ride", startLocal: "2026-03-01 07:00:00", elapsedTimeS: 600 });

    expect((await api.call(await api.pat(ava.id, ["activities.write"]), "DELETE", `/v1/activities/${id}`)).status).toBe(204);

    const [post] = (await reader.rx.waitFor((all) => all.some((r) => r.method === "POST"))).filter((r) => r.method === "POST");
    const event = JSON.parse(post!.body) as Record<string, unknown>;
    expect(event).toMatchObject({ type: "activity.deleted", object_type: "activity", object_id: id, athlete_id: ava.id });
    expect(verifyWebhookSignature(post!.body, post!.headers["service-signature"] as string, reader.sub.secret)).toMatchObject({ ok: true });
    // Fan-out judged both subscriptions in the transaction that made the delivery above.
    expect(await countRows(webhookDeliveries, eq(webhookDeliveries.subscriptionId, profileOnly.sub.id))).toBe(0);
    expect(profileOnly.rx.requests.filter((r) => r.method === "POST")).toEqual([]);

    await eventsVisible(await api.db());
    const feed = AppEventList.parse(await (await api.call(reader.token, "GET", "/v1/app/events")).json());
    expect(feed.data.map((e) => [e.type, e.object_id])).toEqual([["activity.deleted", id]]);
    const none = AppEventList.parse(await (await api.call(profileOnly.token, "GET", "/v1/app/events")).json());
    expect(none.data).toEqual([]);
  });
});
