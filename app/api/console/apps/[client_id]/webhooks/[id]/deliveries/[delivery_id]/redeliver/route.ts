// POST /api/console/apps/{client_id}/webhooks/{id}/deliveries/{delivery_id}/redeliver: send it again, same event id.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { redeliverDelivery } from "@/lib/webhooks/subscriptions/redeliver-delivery";
import { wakingRunner } from "@/lib/webhooks/subscriptions/wake-after-commit";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  POST: wakingRunner(
    consoleHandler({ status: 202 }, ({ ctx, params }) =>
      redeliverDelivery({ ctx, clientId: params.client_id!, subscriptionId: params.id!, deliveryId: params.delivery_id! }),
    ),
  ),
});
