// GET /api/console/apps/{client_id}/webhooks: the app's subscriptions, for its owner; POST: subscribe after the handshake.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { parseWith } from "@/lib/http/validation";
import { createSubscription, verifyNewSubscription, type VerifiedEndpoint } from "@/lib/webhooks/subscriptions/create-subscription";
import { listSubscriptions } from "@/lib/webhooks/subscriptions/list-subscriptions";
import { CreateSubscriptionInput, ListSubscriptionsQuery } from "@/lib/webhooks/subscriptions/schemas";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx, params, url }) =>
    listSubscriptions({ ctx, clientId: params.client_id!, query: parseWith(ListSubscriptionsQuery, Object.fromEntries(url.searchParams), "query") }),
  ),
  POST: consoleHandler(
    {
      body: CreateSubscriptionInput,
      status: 201,
      before: ({ ctx, params, body }) => verifyNewSubscription({ ctx, clientId: params.client_id!, input: body }),
    },
    ({ ctx, params, body, prepared }) =>
      createSubscription({ ctx, clientId: params.client_id!, input: body, verified: prepared as VerifiedEndpoint }),
  ),
});
