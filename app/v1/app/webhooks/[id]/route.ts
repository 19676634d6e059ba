// GET|PATCH|DELETE /v1/app/webhooks/{id}: one subscription; PATCH changes, re-enables (and redelivers) or disables it.
import { handle, route } from "@/lib/http/api-route";
import { deleteSubscription } from "@/lib/webhooks/subscriptions/delete-subscription";
import { getSubscription } from "@/lib/webhooks/subscriptions/get-subscription";
import { deleteSubscriptionOp, getSubscriptionOp, updateSubscriptionOp } from "@/lib/webhooks/subscriptions/operations";
import { updateSubscription, verifyUpdatedSubscription } from "@/lib/webhooks/subscriptions/update-subscription";
import { wakingRunner } from "@/lib/webhooks/subscriptions/wake-after-commit";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(getSubscriptionOp, ({ ctx, params }) => getSubscription({ ctx, id: params.id })),
  PATCH: wakingRunner(
    handle(
      updateSubscriptionOp,
      ({ ctx, params, body }) => verifyUpdatedSubscription({ ctx, id: params.id, input: body }),
      ({ ctx, params, body, prepared }) => updateSubscription({ ctx, id: params.id, input: body, verifiedUrl: prepared }),
    ),
  ),
  DELETE: handle(deleteSubscriptionOp, ({ ctx, params }) => deleteSubscription({ ctx, id: params.id })),
});
