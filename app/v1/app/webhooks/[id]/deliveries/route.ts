// GET /v1/app/webhooks/{id}/deliveries?status=&cursor=: the subscription's delivery log, newest first.
import { handle, route } from "@/lib/http/api-route";
import { listDeliveries } from "@/lib/webhooks/subscriptions/list-deliveries";
import { listDeliveriesOp } from "@/lib/webhooks/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(listDeliveriesOp, ({ ctx, params, query }) => listDeliveries({ ctx, subscriptionId: params.id, query })),
});
