import { getDb } from "@/lib/db/client";
import { fanOutEvents } from "@/lib/webhooks/fan-out";
import { listDueDeliveries } from "@/lib/webhooks/claim-deliveries";
import { deliveryDue, inngest, OUTBOX_APPENDED } from "../client";

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
    // A commit may also have put deliveries back in the queue (a redelivery, a re-enable): hand
    // out those changed since fan-out. The minute's run also hands out any left overdue by a
    // crash or an outage; deliveries already handed out in their current version are dropped
    // by Inngest (the event id), and a claim keeps any duplicate from sending twice at once.
    const cron = event.name !== OUTBOX_APPENDED;
    const due = await step.run("find-due", async () =>
      listDueDeliveries(await getDb(), cron ? { limit: 500, overdueS: 120 } : { limit: 500, changedOnly: true }),
    );
    if (due.length) await step.sendEvent("dispatch-due", due.map(deliveryDue));
    const swept = due.length;
    return { events, deliveries, swept };
  },
);
