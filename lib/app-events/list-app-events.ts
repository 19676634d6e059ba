import { and, asc, eq, gte, inArray, isNull, ne, or, sql, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Ctx } from "../auth/actor";
import { events, webhookDeliveries, webhookSubscriptions } from "../db/schema";
import { ApiError } from "../http/errors";
import { decodeCursor, page } from "../http/pagination";
import { appIdOf } from "../webhooks/subscriptions/owned-subscription";
import { APP_ADDRESSED_EVENT_TYPES, EVENT_SCOPES, SUBSCRIBABLE_EVENT_TYPES, TEST_EVENT_TYPE, type WebhookEvent } from "../events/catalog";
import { entitledAt } from "../webhooks/entitlement";
import { eventPayload } from "../webhooks/payload";
import { outboxHorizon } from "./outbox-horizon";
import type { ListAppEventsQuery } from "./schemas";

export const APP_EVENTS_DAYS = 30;

/** A place in the outbox as this list reads it: the writing transaction, then `seq`. */
type Position = { xact: string; seq: number };

/**
 * `after` (or `cursor`, named as `field`) is a cursor this list issued or an event id; either way, an outbox position. A cursor
 * of one `seq` alone (issued before events carried their transaction) names its event's place.
 */
async function afterPosition(ctx: Ctx, appId: string, after: string, field: "after" | "cursor"): Promise<Position> {
  const at = async (where: SQL, refusal: ApiError): Promise<Position> => {
    const [row] = await ctx.db.select({ xact: events.xact, seq: events.seq }).from(events).where(where).limit(1);
    if (!row) throw refusal;
    return row;
  };
  // Only an event of this app's: another app's event id (or place) is refused as one that does
  // not exist (answering it would tell whether it does). The app's own test events are its too
  // (they arrive signed, with their id): a place to go on from, though never listed. So is an
  // event it was sent of an athlete who has since disconnected (the last one it received, say).
  const ours = or(sentTo(appId, SUBSCRIBABLE_EVENT_TYPES), deliveredTo(appId), and(eq(events.type, TEST_EVENT_TYPE), eq(events.clientId, appId)))!;
  if (after.startsWith("evt_")) {
    return at(
      and(eq(events.id, after), ours)!,
      new ApiError("invalid_cursor", `No event ${after}.`, {
        errors: [{ field, code: "invalid_cursor", detail: "not an event id or cursor from this API" }],
      }),
    );
  }
  const badCursor = new ApiError("invalid_cursor", "The cursor is not one this API returned.", {
    errors: [{ field, code: "invalid_cursor", detail: "not an event id or cursor from this API" }],
  });
  let parts: string[];
  try {
    parts = decodeCursor(after, 2);
  } catch {
    try {
      parts = decodeCursor(after, 1);
    } catch {
      throw badCursor;
    }
  }
  // A transaction id is an unsigned 64-bit number (19 digits always fit); a `seq` is a bigint
  // this service hands out from 1, read here as a number, so only a safe integer is one.
  const seqOf = (p: string | undefined) => (p !== undefined && /^\d{1,16}$/.test(p) && Number.isSafeInteger(Number(p)) ? Number(p) : undefined);
  if (parts.length === 1) {
    const seq = seqOf(parts[0]);
    if (seq === undefined) throw badCursor;
    return at(and(eq(events.seq, seq), ours)!, badCursor);
  }
  const seq = seqOf(parts[1]);
  if (!/^\d{1,19}$/.test(parts[0]!) || seq === undefined) throw badCursor;
  return { xact: parts[0]!, seq };
}

/**
 * The events of the kinds `types` that the app would be sent now: those addressed to it
 * (athlete.deauthorized, which follows the end of a grant and needs no scope), and athletes'
 * events of kinds whose scope its grant carried, as of when each occurred, as fan-out judges it
 * (lib/webhooks/entitlement.ts), by a grant still in force. An athlete who has disconnected the
 * app gives it nothing more: what it was sent before is listed by `deliveredTo`, and no more (a
 * kind its subscriptions took up after the disconnect would otherwise show it events it never had).
 */
function sentTo(appId: string, types: readonly WebhookEvent["type"][]): SQL {
  const appTypes = types.filter((t) => APP_ADDRESSED_EVENT_TYPES.includes(t));
  const athleteTypes = types.filter((t) => EVENT_SCOPES[t]);
  const branches: SQL[] = [];
  if (appTypes.length) branches.push(sql`(${inArray(events.type, appTypes)} and ${events.clientId} = ${appId})`);
  if (athleteTypes.length) {
    const entitled = entitledAt({ clientId: sql`${appId}`, athleteId: events.athleteId, type: events.type, occurredAt: events.occurredAt });
    branches.push(sql`(${isNull(events.clientId)} and ${inArray(events.type, athleteTypes)} and ${entitled})`);
  }
  return branches.length ? sql`(${sql.join(branches, sql` or `)})` : sql`false`;
}

/**
 * The events a delivery was made for to one of the app's subscriptions (sent, or queued to be):
 * the app was sent them, whatever its subscriptions cover now. Not one the athlete's disconnect
 * withdrew before its first attempt (lib/webhooks/withdraw.ts): that one was never sent, and will
 * not be. Test events aside.
 */
function deliveredTo(appId: string): SQL {
  const d = webhookDeliveries;
  const withdrawnUnsent = and(eq(d.failureReason, "athlete_disconnected"), eq(d.attemptCount, 0));
  return sql`(${ne(events.type, TEST_EVENT_TYPE)} and exists (
    select 1 from ${d} where ${d.eventSeq} = ${events.seq}
      and ${d.subscriptionId} in (select ${webhookSubscriptions.id} from ${webhookSubscriptions} where ${webhookSubscriptions.clientId} = ${appId})
      and not (${withdrawnUnsent})))`;
}

/**
 * CONTRACT §5: the events of the last 30 days that the app was or would have been sent,
 * oldest first, for reconciling after an outage. Would have been: SPEC §6.2's three
 * conditions: the kind is covered by one of the app's subscriptions (active or disabled) now,
 * and the athlete's grant, in force now, existed and carried the kind's scope as of when the
 * event occurred. `athlete.deauthorized` events addressed to the app count once the kind is
 * covered. Was: every event one of its subscriptions has a delivery of (but one withdrawn unsent),
 * also of a kind no subscription covers any more (a subscription narrowed after it was sent). So the events of an
 * athlete who has since disconnected stay listed up to the disconnect as far as the app was sent
 * them, none after it (also once they connect again), and none it was never sent: the disconnect
 * ended its reach. Test events (`webhook.test`) are not listed.
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
  const given = query.after ?? query.cursor;
  const after = given ? await afterPosition(ctx, appId, given, query.after !== undefined ? "after" : "cursor") : null;
  if (!covered.length) return { data: [], next_cursor: null };
  const rows = await ctx.db
    .select()
    .from(events)
    .where(
      and(
        after ? sql`(${events.xact}, ${events.seq}) > (${after.xact}::xid8, ${after.seq})` : undefined,
        // Only what transactions older than every one of this database's still running wrote:
        // any event committed later comes after these in (xact, seq), so no cursor handed out
        // passes it by.
        sql`${events.xact} < ${outboxHorizon}`,
        gte(events.occurredAt, new Date(nowMs - APP_EVENTS_DAYS * 86_400_000)),
        or(and(inArray(events.type, covered), sentTo(appId, covered)), deliveredTo(appId)),
      ),
    )
    .orderBy(asc(events.xact), asc(events.seq))
    .limit(query.limit + 1);
  const p = page(rows, query.limit, (r) => [r.xact, String(r.seq)]);
  return { data: p.data.map(eventPayload), next_cursor: p.next_cursor };
}
