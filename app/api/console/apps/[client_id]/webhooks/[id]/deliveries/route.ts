// GET /api/console/apps/{client_id}/webhooks/{id}/deliveries?status=&cursor=: the delivery log, newest first.
import { route } from "@/lib/http/api-route";
import { consoleHandler } from "@/lib/http/console-route";
import { parseWith } from "@/lib/http/validation";
import { listDeliveries } from "@/lib/webhooks/subscriptions/list-deliveries";
import { ListDeliveriesQuery } from "@/lib/webhooks/subscriptions/schemas";

export const { GET, POST, PUT, PATCH, DELETE } = route({
  GET: consoleHandler({}, ({ ctx, params, url }) =>
    listDeliveries({
      ctx,
      clientId: params.client_id!,
      subscriptionId: params.id!,
      query: parseWith(ListDeliveriesQuery, Object.fromEntries(url.searchParams), "query"),
    }),
  ),
});
