import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { createActivity } from "../../activities/create-activity";
import { oauthClients, oauthGrants } from "../../db/schema";
import { resetEnvForTests } from "../../env";
import { newId } from "../../ids";
import { issueAppAccessToken } from "../../oauth/access-token";
import { setupApi } from "../../testing/fixtures";
import { handshakeThen, type Received, type Receiver } from "../../testing/webhook-receiver";
import { runnerForFile } from "../../testing/webhook-runner";
import { verifyWebhookSignature } from "../signature";
import { openApiDocument } from "../../openapi/document";
import { Delivery, SubscriptionWithSecret, UpdatedSubscription } from "./schemas";
import { inWriteCtx } from "../../http/operation";

// The verbs of this folder against the real delivery engine: what they queue is delivered.

process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
resetEnvForTests();

const api = setupApi();
const delivery = runnerForFile(api);

/** A receiver that answers the handshake and then `post` for each delivery. */
async function endpoint(post: (r: Received) => number = () => 204) {
  return delivery.receiver(handshakeThen(post));
}

async function app() {
  const owner = await api.person();
  const clientId = `dl-${randomBytes(5).toString("hex")}`;
  const db = await api.db();
  await db.insert(oauthClients).values({ clientId, ownerId: owner.id, name: "Delivered", kind: "confidential", secretHash: "x", redirectUris: ["https://d.example.com/cb"] });
  return { clientId, ownerId: owner.id, token: (await issueAppAccessToken(db, { clientId, secretHash: "x" })).token };
}

const posts = (rx: Receiver) => rx.requests.filter((r) => r.method === "POST");

describe("with the local runner", () => {
  it("delivers a test event, signed, to the one subscription, and a redelivery carries the same event id", async () => {
    const a = await app();
    const rx = await endpoint();
    const sub = SubscriptionWithSecret.parse(
      await (await api.call(a.token, "POST", "/v1/app/webhooks", { body: { url: rx.url, events: ["metric.created"] } })).json(),
    );
    const queued = Delivery.parse(await (await api.call(a.token, "POST", `/v1/app/webhooks/${sub.id}/send-test-event`)).json());
    await rx.waitFor((all) => all.filter((r) => r.method === "POST").length === 1);
    const [first] = posts(rx);
    expect(JSON.parse(first!.body)).toEqual(queued.event);
    expect(queued.event).toMatchObject({ type: "webhook.test", athlete_id: a.ownerId, object_id: sub.id });
    expect(first!.headers["service-delivery-id"]).toBe(queued.id);
    // Every header the OpenAPI document's webhook entry declares is on the real delivery.
    const declared = (openApiDocument(api.url) as unknown as { webhooks: Record<string, { post: { parameters?: { in: string; name: string }[] } }> })
      .webhooks["webhook.test"]!.post.parameters!.filter((p) => p.in === "header")
      .map((p) => p.name.toLowerCase());
    expect(declared.length).toBeGreaterThanOrEqual(3);
    for (const name of declared) expect(first!.headers[name], name).toBeTruthy();
    expect(verifyWebhookSignature(first!.body, first!.headers["service-signature"] as string, sub.secret)).toMatchObject({ ok: true });

    await expect
      .poll(async () => Delivery.parse(await (await api.call(a.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries/${queued.id}`)).json()).status)
      .toBe("succeeded");
    expect((await api.call(a.token, "POST", `/v1/app/webhooks/${sub.id}/deliveries/${queued.id}/redeliver`)).status).toBe(202);
    await rx.waitFor((all) => all.filter((r) => r.method === "POST").length === 2);
    const second = posts(rx)[1]!;
    expect(second.body).toBe(first!.body);
    expect(second.headers["service-event-id"]).toBe(queued.event!.id);
    await expect
      .poll(async () => Delivery.parse(await (await api.call(a.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries/${queued.id}`)).json()).attempts.length)
      .toBe(2);
  });

  it("re-enable and redeliver: the deliveries that failed while the endpoint was down arrive once it is back", async () => {
    const a = await app();
    let up = false;
    const rx = await endpoint(() => (up ? 204 : 503));
    const sub = SubscriptionWithSecret.parse(
      await (await api.call(a.token, "POST", "/v1/app/webhooks", { body: { url: rx.url, events: ["activity.created"] } })).json(),
    );
    const athlete = await api.person();
    await (await api.db()).insert(oauthGrants).values({ id: newId("grt"), clientId: a.clientId, userId: athlete.id, scopes: ["activities.read"] });
    const ctx = { db: await api.db(), actor: { kind: "session" as const, userId: athlete.id } };
    const input = { name: "Run", sport_type: "run" as const, start_local: "2026-03-01T07:00:00", elapsed_time_s: 600 };
    const made = [await inWriteCtx(ctx, (ctx) => createActivity({ ctx, athleteId: athlete.id, input })), await inWriteCtx(ctx, (ctx) => createActivity({ ctx, athleteId: athlete.id, input }))];

    // Down: attempts fail and the streak begins; the developer disables the endpoint meanwhile.
    await rx.waitFor((all) => all.filter((r) => r.method === "POST").length >= 2);
    expect((await api.call(a.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { status: "disabled" } })).status).toBe(200);
    const failed = (await (await api.call(a.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries?status=failed`)).json()) as { data: unknown[] };
    expect(failed.data).toHaveLength(2);

    up = true;
    const res = await api.call(a.token, "PATCH", `/v1/app/webhooks/${sub.id}`, { body: { status: "active", redeliver_failed: true } });
    expect(UpdatedSubscription.parse(await res.json())).toMatchObject({ status: "active", consecutive_failures: 0, redelivered: 2 });
    const upSince = Date.now();
    await rx.waitFor((all) => made.every((m) => all.some((r) => r.method === "POST" && r.at >= upSince && r.body.includes(m.id))));
    await expect
      .poll(async () => ((await (await api.call(a.token, "GET", `/v1/app/webhooks/${sub.id}/deliveries?status=succeeded`)).json()) as { data: unknown[] }).data.length)
      .toBe(2);
  });
});
