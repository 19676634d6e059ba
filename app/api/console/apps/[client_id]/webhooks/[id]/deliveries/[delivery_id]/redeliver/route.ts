// POST /api/console/apps/{client_id}/webhooks/{id}/deliveries/{delivery_id}/redeliver: send it again, same event id.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { redeliverDelivery } from "@/lib/webhooks/subscriptions/redeliver-delivery";
import { Delivery } from "@/lib/webhooks/subscriptions/schemas";
import { wakingRunner } from "@/lib/webhooks/subscriptions/wake-after-commit";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  POST: wakingRunner(
    consoleHandler(
      { method: "POST", params: pathParams("client_id", "id", "delivery_id"), response: { status: 202, schema: Delivery } },
      ({ ctx, params }) => redeliverDelivery({ ctx, clientId: params.client_id, subscriptionId: params.id, deliveryId: params.delivery_id }),
    ),
  ),
});
