import { deliverWebhookFn } from "./functions/deliver-webhook";
import { fanOutEventsFn } from "./functions/fan-out-events";

/** Every function served at /api/inngest. */
export const functions = [fanOutEventsFn, deliverWebhookFn];
