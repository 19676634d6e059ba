// POST /api/console/apps/{client_id}/webhooks/{id}/send-test-event: a signed `webhook.test` delivery to this subscription.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { Delivery } from "@/lib/webhooks/subscriptions/schemas";
import { sendTestEvent } from "@/lib/webhooks/subscriptions/send-test-event";
import { wakingRunner } from "@/lib/webhooks/subscriptions/wake-after-commit";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  POST: wakingRunner(
    consoleHandler({ method: "POST", idempotent: true, params: pathParams("client_id", "id"), response: { status: 202, schema: Delivery } }, ({ ctx, params }) =>
      sendTestEvent({ ctx, clientId: params.client_id, id: params.id }),
    ),
  ),
});
