import { Inngest } from "inngest";
import type { FannedOutDelivery } from "@/lib/webhooks/fan-out";

/** DELIVERY_RUNNER=inngest: Inngest Cloud or a self-hosted Inngest server calls /api/inngest. */
export const inngest = new Inngest({ id: "athlete-activity-service" });

/**
 * Sent after a write commits (see inngest/outbox-notifier.ts): there are events to fan out,
 * or, with `data.queue`, deliveries were queued or put back outside fan-out (a redelivery,
 * a re-enable, a test event) and are to be handed out.
 */
export const OUTBOX_APPENDED = "aas/outbox.appended";
export type OutboxAppendedData = { queue?: boolean };
/** One delivery to attempt; `subscription_id` keys the per-subscription concurrency. */
export const DELIVERY_DUE = "aas/delivery.due";

export type DeliveryDueData = { delivery_id: string; subscription_id: string };

/**
 * A subscription's deliveries wait with no run to take them: those that waited behind its
 * probe once it recovers, or a whole streak queued again (a re-enable with redeliver_failed,
 * told by the outbox notifier). They are handed out a page at a time (`hand-out-waiting`); `as_of`
 * (a version, ms: `listDueDeliveries`'s `asOf`) keeps to what waited then, not what was handed
 * out since, so a second such event finds nothing left; `after_seq` continues after that
 * outbox position.
 */
export const DELIVERIES_WAITING = "aas/deliveries.waiting";
export type DeliveriesWaitingData = { subscription_id: string; as_of?: number; after_seq?: number };

/** The hand-out of a subscription's deliveries waiting as of `asOf`: one per subscription and version, however many runs find them. */
export function deliveriesWaiting(subscriptionId: string, asOf: number) {
  return { id: `waiting-${subscriptionId}-v${asOf}`, name: DELIVERIES_WAITING, data: { subscription_id: subscriptionId, as_of: asOf } satisfies DeliveriesWaitingData };
}

/**
 * The event that hands one delivery to `deliver-webhook`. Its id names the delivery's version
 * (the row's updated_at), so Inngest drops a second hand-out of an unchanged delivery (fan-out
 * and a sweep that both saw it) while a redelivery or a recovery hands it out again. A run that
 * ends with its delivery waiting behind a failing subscription's probe gives it a new version
 * first (`claimDelivery`), or the recovery's hand-out would be dropped as the one before it.
 */
export function deliveryDue(d: FannedOutDelivery) {
  return { id: `deliver-${d.id}-${d.version}`, name: DELIVERY_DUE, data: { delivery_id: d.id, subscription_id: d.subscriptionId } satisfies DeliveryDueData };
}

/**
 * The minute's sweep hands out again what is overdue by minutes: a hand-out that never got
 * as far as a claim (its run failed while the database or `/api/inngest` was unreachable, or
 * waited its rounds out) left the row's version unchanged, so `deliveryDue`'s id would be one
 * Inngest has seen and would drop for a day, and a failing subscription's probe with it. Each
 * sweep's hand-out is its own (`sweptAt`, the sweep's minute); the claim still lets only one
 * run send.
 */
export function sweptDue(d: FannedOutDelivery, sweptAt: number) {
  const due = deliveryDue(d);
  return { ...due, id: `${due.id}-swept-${Math.floor(sweptAt / 60_000)}` };
}
