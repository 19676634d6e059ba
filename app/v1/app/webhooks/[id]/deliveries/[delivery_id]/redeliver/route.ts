// POST /v1/app/webhooks/{id}/deliveries/{delivery_id}/redeliver: send the delivery again, same event id.
import { handle, route } from "@/lib/http/api-route";
import { redeliverDeliveryOp } from "@/lib/webhooks/subscriptions/operations";
import { redeliverDelivery } from "@/lib/webhooks/subscriptions/redeliver-delivery";
import { wakingRunner } from "@/lib/webhooks/subscriptions/wake-after-commit";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  POST: wakingRunner(
    handle(redeliverDeliveryOp, ({ ctx, params }) => redeliverDelivery({ ctx, subscriptionId: params.id, deliveryId: params.delivery_id })),
  ),
});
