import { getDb } from "@/lib/db/client";
import { listDueDeliveries } from "@/lib/webhooks/claim-deliveries";
import { DELIVERIES_WAITING, deliveryDue, inngest, type DeliveriesWaitingData } from "../client";

/** Deliveries one step lists and hands out (one send: well under Inngest's size limits). */
export const WAITING_PAGE = 500;
/** Pages one run takes before it hands the rest to a run of its own (Inngest caps a run's steps and state). */
export const WAITING_PAGES_PER_RUN = 20;

/**
 * Hands out every delivery that waited behind a failing subscription's probe once it recovers
 * (sent by `deliver-webhook`): while the subscription failed, each ended its run waiting, so
 * nothing else would take them but the minute's sweep. The same for a whole streak queued again
 * by a re-enable with redeliver_failed (sent by the outbox notifier). Only those unchanged since `as_of`:
 * what was handed out since (by an earlier run for the same recovery, or fan-out) has a run
 * already. A page at a time, oldest events first,
 * as the local runner takes them; each page marked as handed out (`listDueDeliveries`'s
 * `handOut`), so the sweep does not hand them out again while they wait for the subscription's
 * slots. After WAITING_PAGES_PER_RUN pages the rest goes to the next run, from where this one
 * stopped.
 */
export const handOutWaitingFn = inngest.createFunction(
  {
    id: "hand-out-waiting",
    retries: 5,
    concurrency: [{ key: "event.data.subscription_id", limit: 1 }],
    triggers: [{ event: DELIVERIES_WAITING }],
  },
  async ({ event, step }) => {
    const { subscription_id: subscriptionId, as_of: asOf, after_seq: start } = event.data as DeliveriesWaitingData;
    let afterSeq = start;
    let handedOut = 0;
    for (let page = 0; page < WAITING_PAGES_PER_RUN; page++) {
      const waiting = await step.run(`find-waiting-${page}`, async () =>
        listDueDeliveries(await getDb(), { limit: WAITING_PAGE, subscriptionId, afterSeq, asOf, handOut: true }),
      );
      // Empty: none left (rows claimed meanwhile can make a page short, so only empty ends it).
      if (waiting.length === 0) return { handedOut, done: true };
      await step.sendEvent(`dispatch-waiting-${page}`, waiting.map(deliveryDue));
      handedOut += waiting.length;
      afterSeq = waiting.at(-1)!.seq;
    }
    await step.sendEvent("hand-out-rest", {
      id: `waiting-${subscriptionId}-v${asOf ?? "any"}-after-${afterSeq}`,
      name: DELIVERIES_WAITING,
      data: { subscription_id: subscriptionId, as_of: asOf, after_seq: afterSeq } satisfies DeliveriesWaitingData,
    });
    return { handedOut, done: false };
  },
);
