// GET /v1/app/events?after=: the last 30 days' events the app was or would have been sent, oldest first.
import { listAppEvents } from "@/lib/app-events/list-app-events";
import { listAppEventsOp } from "@/lib/app-events/operations";
import { handle, route } from "@/lib/http/api-route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: handle(listAppEventsOp, ({ ctx, query }) => listAppEvents({ ctx, query })),
});
