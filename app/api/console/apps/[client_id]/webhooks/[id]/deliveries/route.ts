// GET /api/console/apps/{client_id}/webhooks/{id}/deliveries?status=&cursor=: the delivery log, newest first.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { listDeliveries } from "@/lib/webhooks/subscriptions/list-deliveries";
import { DeliveryList, ListDeliveriesQuery } from "@/lib/webhooks/subscriptions/schemas";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler(
    { method: "GET", params: pathParams("client_id", "id"), query: ListDeliveriesQuery, response: { status: 200, schema: DeliveryList } },
    ({ ctx, params, query }) => listDeliveries({ ctx, clientId: params.client_id, subscriptionId: params.id, query }),
  ),
});
