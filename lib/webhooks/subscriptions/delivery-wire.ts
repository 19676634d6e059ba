import { asc, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { events, webhookAttempts, webhookDeliveries } from "../../db/schema";
import { eventPayload } from "../payload";
import type { Delivery, DeliveryAttempt } from "./schemas";

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type EventRow = typeof events.$inferSelect;
type AttemptRow = typeof webhookAttempts.$inferSelect;

/** Headers as logged, whichever JSON shape they were stored in: an object, or a list of pairs. */
function headersOf(stored: unknown): Record<string, string> {
  const entries: [string, unknown][] = Array.isArray(stored)
    ? stored.filter((p): p is [string, unknown] => Array.isArray(p) && typeof p[0] === "string")
    : stored && typeof stored === "object"
      ? Object.entries(stored)
      : [];
  return Object.fromEntries(entries.map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
}

function toAttemptWire(a: AttemptRow): DeliveryAttempt {
  return {
    attempt: a.attempt,
    started_at: a.startedAt.toISOString(),
    duration_ms: a.durationMs,
    outcome: a.outcome,
    response_status: a.responseStatus,
    response_body_excerpt: a.responseBodyExcerpt,
    error: a.error,
    request_headers: headersOf(a.requestHeaders),
    request_body: a.requestBody,
  };
}

/** Deliveries in the wire shape, each with its event and every attempt (two queries for the lot). */
export async function toDeliveriesWire(db: Db, rows: DeliveryRow[]): Promise<Delivery[]> {
  if (!rows.length) return [];
  const eventIds = [...new Set(rows.map((d) => d.eventId))];
  const [eventRows, attemptRows] = await Promise.all([
    db.select().from(events).where(inArray(events.id, eventIds)),
    db
      .select()
      .from(webhookAttempts)
      .where(
        inArray(
          webhookAttempts.deliveryId,
          rows.map((d) => d.id),
        ),
      )
      .orderBy(asc(webhookAttempts.deliveryId), asc(webhookAttempts.attempt)),
  ]);
  const eventById = new Map<string, EventRow>(eventRows.map((e) => [e.id, e]));
  const attemptsOf = new Map<string, DeliveryAttempt[]>();
  for (const a of attemptRows) {
    const list = attemptsOf.get(a.deliveryId) ?? [];
    list.push(toAttemptWire(a));
    attemptsOf.set(a.deliveryId, list);
  }
  return rows.map((d) => {
    const e = eventById.get(d.eventId);
    return {
      id: d.id,
      subscription_id: d.subscriptionId,
      event: e ? eventPayload(e) : null,
      status: d.status,
      failure_reason: d.status === "failed" ? d.failureReason : null,
      attempt_count: d.attemptCount,
      next_attempt_at: d.status === "pending" ? d.nextAttemptAt.toISOString() : null,
      created_at: d.createdAt.toISOString(),
      attempts: attemptsOf.get(d.id) ?? [],
    };
  });
}
