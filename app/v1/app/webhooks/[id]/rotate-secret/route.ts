// POST /v1/app/webhooks/{id}/rotate-secret: a new signing secret (shown once); the previous one also signs for 24 hours.
import { handle, route } from "@/lib/http/api-route";
import { rotateSubscriptionSecretOp } from "@/lib/webhooks/subscriptions/operations";
import { rotateSubscriptionSecret } from "@/lib/webhooks/subscriptions/rotate-subscription-secret";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  POST: handle(rotateSubscriptionSecretOp, ({ ctx, params }) => rotateSubscriptionSecret({ ctx, id: params.id })),
});
