import "server-only";
import type { Db } from "@/lib/db/client";
import { log } from "@/lib/log";
import type { Work } from "@/lib/events/notify";
import { listenForWebhookWork, type RequeuedSubscription } from "@/lib/webhooks/listen";
import { onWebhookWake } from "@/lib/webhooks/wake";
import { deliveriesWaiting, inngest, OUTBOX_APPENDED, type OutboxAppendedData } from "./client";

/**
 * DELIVERY_RUNNER=inngest: tells Inngest when writes commit (LISTEN, the same NOTIFY the
 * local runner hears) so fan-out runs at once; the function's one-minute cron covers anything
 * missed. Sends are coalesced: at most one in flight and one queued behind it.
 */
export function startOutboxNotifier(getDb: () => Promise<Db>): { stop: () => Promise<void> } {
  let sending = false;
  let queued: OutboxAppendedData | undefined;
  let stopped = false;
  let unlisten: (() => Promise<void>) | undefined;
  const send = (data: OutboxAppendedData) => {
    if (stopped) return;
    if (sending) {
      queued = { ...queued, ...data };
      return;
    }
    sending = true;
    inngest
      .send({ name: OUTBOX_APPENDED, data })
      .catch((err: unknown) => log.warn("could not tell Inngest about new webhook work; its minute's sweep hands it out once Inngest answers", { error: String(err) }))
      .finally(() => {
        sending = false;
        if (queued) {
          const next = queued;
          queued = undefined;
          send(next);
        }
      });
  };
  // A whole subscription requeued (a re-enable with redeliver_failed): every one of its
  // deliveries is handed out, a page at a time, not the queue listing's 500 with the rest left
  // to the minute's sweep. One event per requeue (its id names it), not coalesced.
  const handOut = (r: RequeuedSubscription) => {
    if (stopped) return;
    inngest
      .send(deliveriesWaiting(r.subscriptionId, r.asOf))
      .catch((err: unknown) => log.warn("could not tell Inngest about a subscription's requeued deliveries; its minute's sweep hands them out once Inngest answers", { error: String(err) }));
  };
  const onWork = (work: Work, requeued?: RequeuedSubscription) => (requeued ? handOut(requeued) : send(work === "queue" ? { queue: true } : {}));
  const offWake = onWebhookWake(() => onWork("queue"));
  let attempt: NodeJS.Timeout | undefined;
  const listen = () => {
    getDb()
      .then((db) => listenForWebhookWork(db, onWork))
      .then((u) => {
        unlisten = u;
        if (stopped) void u();
      })
      .catch((err: unknown) => {
        log.warn("outbox notifier cannot LISTEN yet; retrying", { error: String(err) });
        attempt = setTimeout(listen, 5000);
        attempt.unref();
      });
  };
  listen();
  return {
    async stop() {
      stopped = true;
      offWake();
      clearTimeout(attempt);
      await unlisten?.();
    },
  };
}
