import { eq, sql } from "drizzle-orm";
import type { WriteCtx } from "../../http/operation";
import { events, oauthClients, webhookDeliveries } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { newId } from "../../ids";
import { EVENT_KINDS, TEST_EVENT_TYPE } from "../../events/catalog";
import { toDeliveriesWire } from "./delivery-wire";
import { notifyWork } from "../../events/notify";
import { appIdOf, loadSubscription } from "./owned-subscription";
import type { Delivery } from "./schemas";

/**
 * "Send test event": a signed delivery of a `webhook.test` event to this one subscription,
 * through the normal pipeline so it is retried and logged like any other. Its `athlete_id` is
 * the app's owner, the developer account that registered the app (the one pressing the
 * button), so a receiver routing on it finds the developer rather than one of the app's
 * athletes; `object_type` is `webhook_subscription` and `object_id` the subscription's id. It
 * is appended to the outbox already marked fanned out and addressed to the app, and its one
 * delivery is inserted here, so fan-out never sends it anywhere else.
 */
export async function sendTestEvent({ ctx, clientId, id }: { ctx: WriteCtx; clientId?: string; id: string }): Promise<Delivery> {
  const appId = await appIdOf(ctx, clientId);
  const sub = await loadSubscription(ctx.db, appId, id, { forShare: true });
  if (sub.status !== "active") {
    throw new ApiError("conflict", "The subscription is disabled: re-enable it before sending a test event.");
  }
  const [owner] = await ctx.db.select({ ownerId: oauthClients.ownerId }).from(oauthClients).where(eq(oauthClients.clientId, appId));
  const [event] = await ctx.db
    .insert(events)
    .values({
      id: newId("evt"),
      type: TEST_EVENT_TYPE,
      athleteId: owner?.ownerId ?? "",
      objectId: sub.id,
      objectType: EVENT_KINDS[TEST_EVENT_TYPE].objectType,
      clientId: appId,
      fannedOutAt: sql`now()`,
    })
    .returning();
  const [delivery] = await ctx.db
    .insert(webhookDeliveries)
    .values({ id: newId("whd"), subscriptionId: sub.id, eventId: event!.id, eventSeq: event!.seq, nextAttemptAt: sql`now()` })
    .returning();
  await notifyWork(ctx.db);
  const [wire] = await toDeliveriesWire(ctx.db, [delivery!]);
  return wire!;
}
