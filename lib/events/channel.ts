/**
 * The channel on which committed writes announce work to every instance's runner: the outbox
 * (an event appended) and the delivery queue (deliveries queued or put back). The outbox owns
 * it; the runners listen on it (lib/webhooks/listen.ts), and the files bench hears uploads'
 * commits on it. A module of its own, free of server-only imports, so the bench can read it.
 */
export const WORK_CHANNEL = "aas_webhooks";
