// GET /api/console/apps/{client_id}/webhooks: the app's subscriptions, for its owner; POST: subscribe after the handshake.
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { createSubscription, verifyNewSubscription } from "@/lib/webhooks/subscriptions/create-subscription";
import { listSubscriptions } from "@/lib/webhooks/subscriptions/list-subscriptions";
import { ListSubscriptionsQuery, SubscriptionList, SubscriptionWithSecret } from "@/lib/webhooks/subscriptions/schemas";
import { CreateSubscriptionBody } from "@/lib/webhooks/subscriptions/webhook-url";

const params = pathParams("client_id");

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler(
    { method: "GET", params, query: ListSubscriptionsQuery, response: { status: 200, schema: SubscriptionList } },
    ({ ctx, params, query }) => listSubscriptions({ ctx, clientId: params.client_id, query }),
  ),
  POST: consoleHandler(
    { method: "POST", idempotent: true, params, body: CreateSubscriptionBody, response: { status: 201, schema: SubscriptionWithSecret } },
    ({ ctx, params, body }) => verifyNewSubscription({ ctx, clientId: params.client_id, input: body }),
    ({ ctx, params, body, prepared }) => createSubscription({ ctx, clientId: params.client_id, input: body, verified: prepared }),
  ),
});
