import { and, asc, eq, gt, gte, inArray, isNull, sql, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Ctx } from "../auth/actor";
import { events, webhookSubscriptions } from "../db/schema";
import { ApiError } from "../http/errors";
import { decodeCursor, page } from "../http/pagination";
import { appIdOf } from "../webhooks/subscriptions/owned-subscription";
import { APP_ADDRESSED_EVENT_TYPES, EVENT_SCOPES, SUBSCRIBABLE_EVENT_TYPES, type WebhookEvent } from "../events/catalog";
import { entitledAt } from "../webhooks/entitlement";
import { eventPayload } from "../webhooks/payload";
import type { ListAppEventsQuery } from "./schemas";

export const APP_EVENTS_DAYS = 30;

/** `after` is a cursor this list issued or an event id; either way, an outbox position. */
async function afterSeq(ctx: Ctx, after: string): Promise<number> {
  if (after.startsWith("evt_")) {
    const [row] = await ctx.db.select({ seq: events.seq }).from(events).where(eq(events.id, after)).limit(1);
    if (!row) {
      throw new ApiError("invalid_cursor", `No event ${after}.`, {
        errors: [{ field: "after", code: "invalid_cursor", detail: "not an event id or cursor from this API" }],
      });
    }
    return row.seq;
  }
  const [seq] = decodeCursor(after, 1);
  if (!/^\d{1,18}$/.test(seq!)) throw new ApiError("invalid_cursor", "The cursor is not one this API returned.");
  return Number(seq);
}

/**
 * CONTRACT §5: the events of the last 30 days that the app was or would have been sent,
 * oldest first, for reconciling after an outage. SPEC §6.2's three conditions are evaluated
 * as things stand now: the kind is covered by one of the app's subscriptions (active or
 * disabled), the athlete's authorization of the app is in force and was given before the
 * event, and its grant carries the kind's scope. `athlete.deauthorized` events addressed to the
 * app count once the kind is covered. An athlete who has since disconnected drops out: their
 * events are no longer the app's to see. Test events (`webhook.test`) are not listed.
 */
export async function listAppEvents({
  ctx,
  clientId,
  query,
  nowMs = Date.now(),
}: {
  ctx: Ctx;
  clientId?: string;
  query: z.output<typeof ListAppEventsQuery>;
  nowMs?: number;
}): Promise<{ data: WebhookEvent[]; next_cursor: string | null }> {
  const appId = await appIdOf(ctx, clientId);
  const subs = await ctx.db.select({ events: webhookSubscriptions.events }).from(webhookSubscriptions).where(eq(webhookSubscriptions.clientId, appId));
  const covered = SUBSCRIBABLE_EVENT_TYPES.filter((t) => subs.some((s) => s.events.includes(t)));
  const after = query.after ? await afterSeq(ctx, query.after) : 0;
  if (!covered.length) return { data: [], next_cursor: null };

  // Kinds addressed to one app (athlete.deauthorized) follow the end of a grant and need no scope.
  const appTypes = covered.filter((t) => APP_ADDRESSED_EVENT_TYPES.includes(t));
  const athleteTypes = covered.filter((t) => EVENT_SCOPES[t]);
  const branches: SQL[] = [];
  if (appTypes.length) {
    branches.push(sql`(${inArray(events.type, appTypes)} and ${events.clientId} = ${appId})`);
  }
  if (athleteTypes.length) {
    // Judged as fan-out judges it: as of when the event occurred (lib/webhooks/entitlement.ts).
    const entitled = entitledAt({ clientId: sql`${appId}`, athleteId: events.athleteId, type: events.type, occurredAt: events.occurredAt });
    branches.push(sql`(${isNull(events.clientId)} and ${inArray(events.type, athleteTypes)} and ${entitled})`);
  }
  const rows = await ctx.db
    .select()
    .from(events)
    .where(
      and(
        gt(events.seq, after),
        gte(events.occurredAt, new Date(nowMs - APP_EVENTS_DAYS * 86_400_000)),
        inArray(events.type, covered),
        sql`(${sql.join(branches, sql` or `)})`,
      ),
    )
    .orderBy(asc(events.seq))
    .limit(query.limit + 1);
  const p = page(rows, query.limit, (r) => [String(r.seq)]);
  return { data: p.data.map(eventPayload), next_cursor: p.next_cursor };
}
