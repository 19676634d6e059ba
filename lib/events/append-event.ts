import type { Db } from "../db/client";
import { events } from "../db/schema";
import { newId } from "../ids";
import { notifyWork } from "./notify";

export type EventType = "activity.created" | "activity.updated" | "metric.created" | "athlete.deauthorized";
export const EVENT_TYPES: EventType[] = ["activity.created", "activity.updated", "metric.created", "athlete.deauthorized"];

/**
 * Appends to the outbox. Call it with the transaction that made the change: the event, and
 * the notification that wakes the webhook runners, exist exactly when the change commits.
 */
export async function appendEvent(
  tx: Db,
  e: { type: EventType; athleteId: string; objectId: string; objectType: string; clientId?: string },
): Promise<string> {
  const id = newId("evt");
  await tx.insert(events).values({ id, ...e, clientId: e.clientId ?? null });
  await notifyWork(tx, "outbox");
  return id;
}
