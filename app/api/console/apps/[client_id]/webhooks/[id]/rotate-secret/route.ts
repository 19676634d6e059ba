// POST /api/console/apps/{client_id}/webhooks/{id}/rotate-secret: a new signing secret, shown once.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { rotateSubscriptionSecret } from "@/lib/webhooks/subscriptions/rotate-subscription-secret";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  POST: consoleHandler({}, ({ ctx, params }) => rotateSubscriptionSecret({ ctx, clientId: params.client_id!, id: params.id! })),
});
