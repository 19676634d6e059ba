import { compiledInsert, type Db } from "../db/client";
import { events } from "../db/schema";
import { newId } from "../ids";
import { EVENT_KINDS, type SubscribableEventType } from "./catalog";
import { notifyWork } from "./notify";

type Kinds = typeof EVENT_KINDS;

/**
 * An event to append: its kind fixes the object type (the argument, if given, must agree), and a
 * kind addressed to one app must name it.
 */
export type NewEvent<T extends SubscribableEventType> = {
  type: T;
  athleteId: string;
  objectId: string;
  objectType?: Kinds[T]["objectType"];
} & (Kinds[T]["to"] extends "app" ? { clientId: string } : { clientId?: undefined });

/** The outbox's insert, written once: every write that changes athlete data makes it. */
const insertEvent = compiledInsert("append_event", events, ["id", "type", "athleteId", "objectId", "objectType", "clientId"]);

/**
 * Appends to the outbox. Call it with the transaction that made the change: the event exists
 * exactly when the change commits, and the notification that wakes the webhook runners follows
 * that commit (./notify.ts), never a rollback.
 */
export async function appendEvent<T extends SubscribableEventType>(tx: Db, e: NewEvent<T>): Promise<string> {
  const id = newId("evt");
  await insertEvent(tx, {
    id,
    type: e.type,
    athleteId: e.athleteId,
    objectId: e.objectId,
    objectType: EVENT_KINDS[e.type].objectType,
    clientId: e.clientId ?? null,
  });
  await notifyWork(tx, "outbox");
  return id;
}
