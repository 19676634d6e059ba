// GET /v1/app/webhooks/{id}/deliveries/{delivery_id}: one delivery with every attempt.
import { handle, route } from "@/lib/http/api-route";
import { getDelivery } from "@/lib/webhooks/subscriptions/get-delivery";
import { getDeliveryOp } from "@/lib/webhooks/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(getDeliveryOp, ({ ctx, params }) => getDelivery({ ctx, subscriptionId: params.id, deliveryId: params.delivery_id })),
});
