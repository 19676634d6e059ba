// POST /api/console/apps/{client_id}/webhooks/{id}/rotate-secret: a new signing secret, shown once.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { rotateSubscriptionSecret } from "@/lib/webhooks/subscriptions/rotate-subscription-secret";
import { SubscriptionWithSecret } from "@/lib/webhooks/subscriptions/schemas";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  POST: consoleHandler(
    { method: "POST", params: pathParams("client_id", "id"), response: { status: 200, schema: SubscriptionWithSecret } },
    ({ ctx, params }) => rotateSubscriptionSecret({ ctx, clientId: params.client_id, id: params.id }),
  ),
});
