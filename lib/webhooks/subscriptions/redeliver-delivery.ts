import { and, eq } from "drizzle-orm";
import type { WriteCtx } from "../../http/operation";
import { webhookDeliveries } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { toDeliveriesWire } from "./delivery-wire";
import { loadDelivery } from "./get-delivery";
import { appIdOf, loadSubscription } from "./owned-subscription";
import { requeueDeliveries } from "./requeue";
import type { Delivery } from "./schemas";

/**
 * Sends a delivery again, whatever its state: the same event, so the same event id (receivers
 * deduplicate on it). It becomes `pending`, due now, and keeps its attempt log. A disabled
 * subscription is sent nothing: re-enable it first; an event of an athlete who has since
 * disconnected the app is not sent again (409).
 */
export async function redeliverDelivery({
  ctx,
  clientId,
  subscriptionId,
  deliveryId,
}: {
  ctx: WriteCtx;
  clientId?: string;
  subscriptionId: string;
  deliveryId: string;
}): Promise<Delivery> {
  const appId = await appIdOf(ctx, clientId);
  const sub = await loadSubscription(ctx.db, appId, subscriptionId, { forShare: true });
  await loadDelivery(ctx.db, subscriptionId, deliveryId);
  if (sub.status !== "active") {
    throw new ApiError("conflict", "The subscription is disabled: re-enable it (PATCH with status active) before redelivering.");
  }
  const [row] = await requeueDeliveries(ctx.db, and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.subscriptionId, subscriptionId))!);
  if (!row) {
    throw new ApiError("conflict", `Delivery ${deliveryId}'s event no longer goes to this app: its athlete disconnected the app, and events stop with the access.`);
  }
  const [wire] = await toDeliveriesWire(ctx.db, [row]);
  return wire!;
}
