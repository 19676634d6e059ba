import { getDb } from "@/lib/db/client";
import { fanOutEvents } from "@/lib/webhooks/fan-out";
import { listDueDeliveries } from "@/lib/webhooks/claim-deliveries";
import { DELIVERY_DUE, inngest, OUTBOX_APPENDED } from "../client";

const BATCHES_PER_RUN = 20;

/**
 * Turns outbox events into deliveries (lib/webhooks/fan-out.ts) and hands each to
 * `deliver-webhook`. Runs when a write commits and every minute as a safety net; the
 * minute's run also hands out again deliveries left overdue by a crash or an outage.
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
          batch.deliveries.map((d) => ({ name: DELIVERY_DUE, data: { delivery_id: d.id, subscription_id: d.subscriptionId } })),
        );
      }
      if (batch.events < 200) break;
    }
    let swept = 0;
    if (event.name !== OUTBOX_APPENDED) {
      const overdue = await step.run("find-overdue", async () => listDueDeliveries(await getDb(), { limit: 500, overdueS: 120 }));
      swept = overdue.length;
      if (overdue.length) {
        await step.sendEvent(
          "redispatch-overdue",
          overdue.map((d) => ({ name: DELIVERY_DUE, data: { delivery_id: d.id, subscription_id: d.subscriptionId } })),
        );
      }
    }
    return { events, deliveries, swept };
  },
);
