import type { events } from "../db/schema";
import type { EventType, WebhookEvent } from "../events/catalog";

type EventRow = Pick<typeof events.$inferSelect, "id" | "type" | "athleteId" | "objectId" | "objectType" | "occurredAt">;

/** SPEC §2.2: the thin event a subscriber receives, in the shape of the catalog's `WebhookEvent`. */
export function eventPayload(e: EventRow): WebhookEvent {
  return {
    id: e.id,
    // The outbox is written only with the catalog's kinds (appendEvent, sendTestEvent), each
    // with its kind's object type; the column is plain text because the schema knows no domain.
    type: e.type as EventType,
    athlete_id: e.athleteId,
    object_id: e.objectId,
    object_type: e.objectType as WebhookEvent["object_type"],
    occurred_at: new Date(e.occurredAt).toISOString(),
  };
}

/**
 * The body of a delivery, serialised once: these exact bytes are signed, sent and logged,
 * so the signature is never computed over a re-serialisation.
 */
export function serializePayload(e: EventRow): string {
  return JSON.stringify(eventPayload(e));
}
