import { and, eq } from "drizzle-orm";
import type { Ctx } from "../../auth/actor";
import type { Db } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { toDeliveriesWire, type DeliveryRow } from "./delivery-wire";
import { appIdOf, loadSubscription } from "./owned-subscription";
import type { Delivery } from "./schemas";

export async function loadDelivery(db: Db, subscriptionId: string, deliveryId: string): Promise<DeliveryRow> {
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.subscriptionId, subscriptionId)))
    .limit(1);
  if (!row) throw new ApiError("not_found", `The subscription has no delivery ${deliveryId}.`);
  return row;
}

/** One delivery of one of the app's subscriptions, with its event and every attempt. */
export async function getDelivery({
  ctx,
  clientId,
  subscriptionId,
  deliveryId,
}: {
  ctx: Ctx;
  clientId?: string;
  subscriptionId: string;
  deliveryId: string;
}): Promise<Delivery> {
  const appId = await appIdOf(ctx, clientId);
  await loadSubscription(ctx.db, appId, subscriptionId);
  const [wire] = await toDeliveriesWire(ctx.db, [await loadDelivery(ctx.db, subscriptionId, deliveryId)]);
  return wire!;
}
