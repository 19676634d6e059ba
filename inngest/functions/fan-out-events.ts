import { getDb } from "@/lib/db/client";
import { fanOutEvents } from "@/lib/webhooks/fan-out";
import { listDueDeliveries } from "@/lib/webhooks/claim-deliveries";
import { deliveryDue, inngest, OUTBOX_APPENDED, sweptDue, type OutboxAppendedData } from "../client";

const BATCHES_PER_RUN = 20;

/**
 * Turns outbox events into deliveries (lib/webhooks/fan-out.ts) and hands each to
 * `deliver-webhook`. Runs when a write commits and every minute as a safety net.
 */
export const fanOutEventsFn = inngest.createFunction(
  {
    id: "fan-out-events",
    retries: 5,
    concurrency: [{ limit: 1 }],
    triggers: [{ event: OUTBOX_APPENDED }, { cron: "* * * * *" }],
  },
  async ({ step, event }) => {
    let events = 0;
    let deliveries = 0;
    for (let i = 0; i < BATCHES_PER_RUN; i++) {
      const batch = await step.run(`fan-out-${i}`, async () => fanOutEvents(await getDb()));
      events += batch.events;
      deliveries += batch.deliveries.length;
      if (batch.deliveries.length) {
        await step.sendEvent(
          `dispatch-${i}`,
          batch.deliveries.map(deliveryDue),
        );
      }
      if (batch.events < 200) break;
    }
    // Deliveries queued or put back outside fan-out (a redelivery, a re-enable, a test event)
    // are handed out when their commit is announced; the minute's run hands out any left
    // overdue by a crash or an outage. A delivery already handed out in its current version is
    // dropped by Inngest (the event id), and a claim keeps a duplicate from sending twice.
    let swept = 0;
    const queue = (event.data as OutboxAppendedData | undefined)?.queue === true;
    if (queue || event.name !== OUTBOX_APPENDED) {
      // The minute's sweep marks what it hands out, and passes over what was handed out (or
      // claimed, or recorded) in the last two minutes: a hand-out still queued for one of its
      // subscription's slots is not handed out again each minute. Subscriptions take turns.
      const due = await step.run("find-due", async () =>
        listDueDeliveries(await getDb(), queue ? { limit: 500 } : { limit: 500, overdueS: 120, handOut: true }),
      );
      // Announced: each under its version. The minute's sweep: under the sweep's own id (`sweptDue`).
      const sweptAt = event.ts ?? Date.now();
      if (due.length) await step.sendEvent("dispatch-due", due.map((d) => (queue ? deliveryDue(d) : sweptDue(d, sweptAt))));
      swept = due.length;
    }
    return { events, deliveries, swept };
  },
);
