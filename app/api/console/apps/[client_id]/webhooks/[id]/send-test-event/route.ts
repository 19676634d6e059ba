// POST /api/console/apps/{client_id}/webhooks/{id}/send-test-event: a signed `webhook.test` delivery to this subscription.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { sendTestEvent } from "@/lib/webhooks/subscriptions/send-test-event";
import { wakingRunner } from "@/lib/webhooks/subscriptions/wake-after-commit";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  POST: wakingRunner(consoleHandler({ status: 202 }, ({ ctx, params }) => sendTestEvent({ ctx, clientId: params.client_id!, id: params.id! }))),
});
