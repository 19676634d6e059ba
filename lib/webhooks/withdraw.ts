import { sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { bareColumn, rowsAs, selectAs, type Db } from "../db/client";
import { events, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { reachesApp } from "./entitlement";

// Aliases of their own, so the rule can sit inside a statement on webhook_deliveries.
const ev = alias(events, "reach_event");
const sub = alias(webhookSubscriptions, "reach_subscription");

/**
 * The delivery row of the enclosing statement still goes to its subscription's app: fan-out's
 * rule (`reachesApp`), judged now. Sending one again (a redelivery, "Re-enable and redeliver")
 * needs it: a disconnected athlete's events are not sent again (SPEC §6.2).
 */
export const deliveryStillReaches: SQL = sql`exists (
  select 1 from ${events} ${ev} join ${webhookSubscriptions} ${sub} on ${sub.id} = ${webhookDeliveries.subscriptionId}
  where ${ev.id} = ${webhookDeliveries.eventId} and ${reachesApp(ev, sub.clientId)})`;

const withdrawnColumns = { id: webhookDeliveries.id };

/**
 * In the transaction that ends athlete `athleteId`'s authorization of app `clientId`: the app's
 * deliveries of that athlete's events not yet sent fail unsent, since events stop together with
 * the access (SPEC §6.2). Waiting retries are not sent; an attempt under way when this commits
 * keeps its lease (it is still in flight: a failing subscription's next probe waits for it) and
 * records its own outcome. `athlete.deauthorized` itself is addressed to the app and stays.
 * Answers how many were withdrawn.
 */
export async function withdrawDeliveries(tx: Db, { clientId, athleteId }: { clientId: string; athleteId: string }): Promise<number> {
  const d = webhookDeliveries;
  const rows = rowsAs(
    withdrawnColumns,
    await tx.execute(sql`
      update ${d}
      set ${bareColumn(d.status)} = 'failed', ${bareColumn(d.failureReason)} = 'athlete_disconnected', ${bareColumn(d.updatedAt)} = now()
      where ${d.status} = 'pending'
        and ${d.subscriptionId} in (select ${webhookSubscriptions.id} from ${webhookSubscriptions} where ${webhookSubscriptions.clientId} = ${clientId})
        and ${d.eventId} in (select ${events.id} from ${events} where ${events.athleteId} = ${athleteId})
        and not ${deliveryStillReaches}
      returning ${selectAs(withdrawnColumns)}`),
  );
  return rows.length;
}
