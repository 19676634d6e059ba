import { deliverWebhookFn } from "./functions/deliver-webhook";
import { fanOutEventsFn } from "./functions/fan-out-events";
import { handOutWaitingFn } from "./functions/hand-out-waiting";
import { processUploadFn } from "./functions/process-upload";

/** Every function served at /api/inngest. */
export const functions = [fanOutEventsFn, deliverWebhookFn, handOutWaitingFn, processUploadFn];
