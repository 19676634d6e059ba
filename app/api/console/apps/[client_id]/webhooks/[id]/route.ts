// GET|PATCH|DELETE /api/console/apps/{client_id}/webhooks/{id}: one subscription; PATCH changes, re-enables (and redelivers) or disables it.
import { z } from "zod";
import { consoleHandler, consoleRoute, pathParams } from "@/lib/http/console-route";
import { deleteSubscription } from "@/lib/webhooks/subscriptions/delete-subscription";
import { getSubscription } from "@/lib/webhooks/subscriptions/get-subscription";
import { Subscription, UpdatedSubscription } from "@/lib/webhooks/subscriptions/schemas";
import { UpdateSubscriptionBody } from "@/lib/webhooks/subscriptions/webhook-url";
import { updateSubscription, verifyUpdatedSubscription } from "@/lib/webhooks/subscriptions/update-subscription";
import { wakingRunner } from "@/lib/webhooks/subscriptions/wake-after-commit";

const params = pathParams("client_id", "id");

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = consoleRoute({
  GET: consoleHandler({ method: "GET", params, response: { status: 200, schema: Subscription } }, ({ ctx, params }) =>
    getSubscription({ ctx, clientId: params.client_id, id: params.id }),
  ),
  PATCH: wakingRunner(
    consoleHandler(
      { method: "PATCH", params, body: UpdateSubscriptionBody, response: { status: 200, schema: UpdatedSubscription } },
      ({ ctx, params, body }) => verifyUpdatedSubscription({ ctx, clientId: params.client_id, id: params.id, input: body }),
      ({ ctx, params, body, prepared }) =>
        updateSubscription({ ctx, clientId: params.client_id, id: params.id, input: body, verifiedUrl: prepared }),
    ),
  ),
  DELETE: consoleHandler({ method: "DELETE", params, response: { status: 200, schema: z.null() } }, ({ ctx, params }) =>
    deleteSubscription({ ctx, clientId: params.client_id, id: params.id }),
  ),
});
