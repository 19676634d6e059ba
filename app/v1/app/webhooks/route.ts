// GET /v1/app/webhooks: the app's subscriptions; POST: subscribe, after the handshake completes.
import { handle, route } from "@/lib/http/api-route";
import { createSubscription, verifyNewSubscription } from "@/lib/webhooks/subscriptions/create-subscription";
import { listSubscriptions } from "@/lib/webhooks/subscriptions/list-subscriptions";
import { createSubscriptionOp, listSubscriptionsOp } from "@/lib/webhooks/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(listSubscriptionsOp, ({ ctx, query }) => listSubscriptions({ ctx, query })),
  POST: handle(
    createSubscriptionOp,
    // The handshake runs before the transaction opens: a slow endpoint holds no connection.
    ({ ctx, body }) => verifyNewSubscription({ ctx, input: body }),
    ({ ctx, body, prepared }) => createSubscription({ ctx, input: body, verified: prepared }),
  ),
});
