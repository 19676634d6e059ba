import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { listDueDeliveries } from "@/lib/webhooks/claim-deliveries";
import { MAX_ATTEMPTS, MAX_IN_FLIGHT_PER_SUBSCRIPTION } from "@/lib/webhooks/policy";
import { deliverOnce } from "@/lib/webhooks/deliver-once";
import { LOCAL_RUNNER_CONCURRENCY } from "@/lib/webhooks/runner-defaults";
import { deliveriesWaiting, DELIVERY_DUE, deliveryDue, inngest, type DeliveryDueData } from "../client";

/** Steps one run may take: every attempt and the wait after it (room for held claims too). */
const MAX_ROUNDS = 2 * MAX_ATTEMPTS;

/**
 * Attempts one delivery until it succeeds or fails for good, sleeping between retries
 * (CONTRACT §7's schedule, decided by lib/webhooks/record-attempt.ts). Each attempt is one
 * step: claim, sign, POST, record. A subscription runs at most a few attempts at once, and
 * while it is failing the claim lets only its oldest pending delivery through; when that
 * succeeds, the deliveries that waited behind it are dispatched again (`hand-out-waiting`),
 * decided from the data (`waitingAfterSuccess`), so a second run of that step decides the same.
 */
export const deliverWebhookFn = inngest.createFunction(
  {
    id: "deliver-webhook",
    // Infrastructure errors only (the database unreachable): answers from the subscriber are
    // recorded as attempts and retried on the schedule, not by Inngest.
    retries: 5,
    // The claim lets no more than this many of a subscription's deliveries be in flight; runs
    // beyond it would only wait for a slot. All subscriptions together, as many as the local
    // runner's slots: each attempt holds an executing step until it is answered (up to the
    // 10 s timeout), and without a ceiling a few hanging endpoints, 4 attempts each, would take
    // every step the Inngest account may run at once, and fan-out and uploads would queue
    // behind them.
    concurrency: [
      { key: "event.data.subscription_id", limit: MAX_IN_FLIGHT_PER_SUBSCRIPTION },
      { limit: LOCAL_RUNNER_CONCURRENCY },
    ],
    triggers: [{ event: DELIVERY_DUE }],
  },
  async ({ event, step }) => {
    const { delivery_id: deliveryId, subscription_id: subscriptionId } = event.data as DeliveryDueData;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const r = await step.run(`attempt-${round}`, async () => {
        const env = getEnv();
        return deliverOnce(await getDb(), deliveryId, { allowPrivate: env.webhooksAllowPrivateNetworks, schedule: env.webhookRetryScheduleS });
      });
      if (r.state === "retry") {
        await step.sleepUntil(`wait-${round}`, new Date(r.at));
        continue;
      }
      if (r.state === "succeeded" && r.waitingAsOf !== undefined) {
        // It ended its subscription's failure streak (or a run of this step already did, and its
        // result was lost): however many waited behind it, `hand-out-waiting` pages through them.
        await step.sendEvent("hand-out-waiting", deliveriesWaiting(subscriptionId, r.waitingAsOf));
      }
      if (r.state === "failed" && !r.subscriptionDisabled) {
        // The probe gave up; the next oldest delivery of a still-failing subscription takes over.
        const next = await step.run("find-next-probe", async () => listDueDeliveries(await getDb(), { limit: 1, subscriptionId }));
        if (next.length) {
          await step.sendEvent(
            "dispatch-next-probe",
            next.map(deliveryDue),
          );
        }
      }
      return r;
    }
    return { state: "handed-over" as const }; // the minute's sweep takes it from here
  },
);
