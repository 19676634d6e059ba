import type { events } from "../db/schema";

/** SPEC §2.2: the thin event a subscriber receives. Nothing about the object itself. */
export type WebhookEventPayload = {
  id: string;
  type: string;
  athlete_id: string;
  object_id: string;
  object_type: string;
  occurred_at: string;
};

type EventRow = Pick<typeof events.$inferSelect, "id" | "type" | "athleteId" | "objectId" | "objectType" | "occurredAt">;

export function eventPayload(e: EventRow): WebhookEventPayload {
  return {
    id: e.id,
    type: e.type,
    athlete_id: e.athleteId,
    object_id: e.objectId,
    object_type: e.objectType,
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
