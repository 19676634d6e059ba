// POST /v1/app/webhooks/{id}/send-test-event: a signed `webhook.test` delivery to this subscription, logged like any other.
import { handle, route } from "@/lib/http/api-route";
import { sendTestEventOp } from "@/lib/webhooks/subscriptions/operations";
import { sendTestEvent } from "@/lib/webhooks/subscriptions/send-test-event";
import { wakingRunner } from "@/lib/webhooks/subscriptions/wake-after-commit";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  POST: wakingRunner(handle(sendTestEventOp, ({ ctx, params }) => sendTestEvent({ ctx, id: params.id }))),
});
