import { and, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import { notifyWork } from "../../events/notify";
import { notifyRequeued } from "../listen";
import { deliveryStillReaches } from "../withdraw";
import type { DeliveryRow } from "./delivery-wire";

/**
 * Puts deliveries back in the queue, due at once. This is the whole hand-over to the
 * delivery runner, through the data: it claims `pending` rows whose `next_attempt_at` has
 * come, and is told when this transaction commits (NOTIFY; in this process the route also
 * calls `wakeWebhookRunner()` after the commit). A delivery a worker holds right now keeps its
 * hold, so it is not sent twice at the same moment. Only deliveries whose event still goes to
 * the app are put back (`deliveryStillReaches`): a disconnected athlete's events are not sent again.
 * `wholeSubscription`, a subscription's whole streak (all of one subscription, however many):
 * the notification names it (`notifyRequeued`), so the Inngest runner hands out every one of
 * them, not the 500 of one listing.
 */
export async function requeueDeliveries(db: Db, where: SQL, opts: { wholeSubscription?: string } = {}): Promise<DeliveryRow[]> {
  const rows = await db
    .update(webhookDeliveries)
    .set({
      status: "pending",
      failureReason: null,
      nextAttemptAt: sql`now()`,
      // Sent again, it gets the whole retry schedule: its attempts so far do not count against it.
      requeuedAtAttempt: sql`${webhookDeliveries.attemptCount}`,
      lockedUntil: sql`case when ${webhookDeliveries.lockedUntil} > now() then ${webhookDeliveries.lockedUntil} end`,
      updatedAt: sql`now()`,
    })
    .where(and(where, deliveryStillReaches))
    .returning();
  if (rows.length === 0) return rows;
  if (opts.wholeSubscription === undefined) await notifyWork(db);
  else await notifyRequeued(db, { subscriptionId: opts.wholeSubscription, asOf: rows.reduce((t, r) => Math.max(t, r.updatedAt.getTime()), 0) });
  return rows;
}
