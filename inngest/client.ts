import { Inngest } from "inngest";

/** DELIVERY_RUNNER=inngest: Inngest Cloud or a self-hosted Inngest server calls /api/inngest. */
export const inngest = new Inngest({ id: "athlete-activity-service" });

/** Sent after a write commits (see inngest/outbox-notifier.ts): there are events to fan out. */
export const OUTBOX_APPENDED = "aas/outbox.appended";
/** One delivery to attempt; `subscription_id` keys the per-subscription concurrency. */
export const DELIVERY_DUE = "aas/delivery.due";

export type DeliveryDueData = { delivery_id: string; subscription_id: string };
