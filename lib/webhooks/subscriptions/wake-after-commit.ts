import type { RouteHandler } from "../../http/api-route";
import { wakeWebhookRunner } from "../wake";

/**
 * A route handler that wakes the delivery runner once its answer is a success. The wrapped
 * handler has committed its transaction by the time it answers, so the runner finds the work
 * it is woken for (a wake from inside the transaction could come too early and be missed).
 */
export function wakingRunner(handler: RouteHandler): RouteHandler {
  const wrapped: RouteHandler = async (req, ctx) => {
    const res = await handler(req, ctx);
    if (res.ok) wakeWebhookRunner();
    return res;
  };
  wrapped.operation = handler.operation;
  return wrapped;
}
