// GET|PATCH|DELETE /api/console/apps/{client_id}/webhooks/{id}: one subscription; PATCH changes, re-enables (and redelivers) or disables it.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { deleteSubscription } from "@/lib/webhooks/subscriptions/delete-subscription";
import { getSubscription } from "@/lib/webhooks/subscriptions/get-subscription";
import { UpdateSubscriptionInput } from "@/lib/webhooks/subscriptions/schemas";
import { updateSubscription, verifyUpdatedSubscription } from "@/lib/webhooks/subscriptions/update-subscription";
import { wakingRunner } from "@/lib/webhooks/subscriptions/wake-after-commit";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx, params }) => getSubscription({ ctx, clientId: params.client_id!, id: params.id! })),
  PATCH: wakingRunner(
    consoleHandler(
      {
        body: UpdateSubscriptionInput,
        before: ({ ctx, params, body }) => verifyUpdatedSubscription({ ctx, clientId: params.client_id!, id: params.id!, input: body }),
      },
      ({ ctx, params, body, prepared }) =>
        updateSubscription({ ctx, clientId: params.client_id!, id: params.id!, input: body, verifiedUrl: prepared as string | undefined }),
    ),
  ),
  DELETE: consoleHandler({}, ({ ctx, params }) => deleteSubscription({ ctx, clientId: params.client_id!, id: params.id! })),
});
