// GET /api/console/apps/{client_id}/webhooks/{id}/deliveries/{delivery_id}: one delivery with every attempt.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { getDelivery } from "@/lib/webhooks/subscriptions/get-delivery";
import { Delivery } from "@/lib/webhooks/subscriptions/schemas";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler(
    { method: "GET", params: pathParams("client_id", "id", "delivery_id"), response: { status: 200, schema: Delivery } },
    ({ ctx, params }) => getDelivery({ ctx, clientId: params.client_id, subscriptionId: params.id, deliveryId: params.delivery_id }),
  ),
});
