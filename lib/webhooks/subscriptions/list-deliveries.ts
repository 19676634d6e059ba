import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import type { Ctx } from "../../auth/actor";
import { webhookDeliveries } from "../../db/schema";
import { decodeCursor, invalidCursor, page } from "../../http/pagination";
import { toDeliveriesWire } from "./delivery-wire";
import { appIdOf, loadSubscription } from "./owned-subscription";
import type { Delivery, ListDeliveriesQuery } from "./schemas";

/**
 * The subscription's delivery log, newest event first (the index that also keeps one delivery
 * per event and subscription): what was sent and what the endpoint
 * answered, attempt by attempt. A delivery not yet sent has no attempts; an attempt that got
 * no HTTP answer is `not_sent` with the reason, never confused with an error answer.
 */
export async function listDeliveries({
  ctx,
  clientId,
  subscriptionId,
  query,
}: {
  ctx: Ctx;
  clientId?: string;
  subscriptionId: string;
  query: ListDeliveriesQuery;
}): Promise<{ data: Delivery[]; next_cursor: string | null }> {
  const appId = await appIdOf(ctx, clientId);
  await loadSubscription(ctx.db, appId, subscriptionId);
  const where: SQL[] = [eq(webhookDeliveries.subscriptionId, subscriptionId)];
  if (query.status) where.push(eq(webhookDeliveries.status, query.status));
  if (query.cursor) where.push(lt(webhookDeliveries.eventSeq, decodeSeqCursor(query.cursor)));
  const rows = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(and(...where))
    .orderBy(desc(webhookDeliveries.eventSeq))
    .limit(query.limit + 1);
  const p = page(rows, query.limit, (r) => [String(r.eventSeq)]);
  return {
    data: await toDeliveriesWire(ctx.db, p.data),
    next_cursor: p.next_cursor,
  };
}

/** The event position a delivery-log cursor holds; anything else is 400 `invalid_cursor`. */
function decodeSeqCursor(cursor: string): number {
  const [seq] = decodeCursor(cursor, 1) as [string];
  if (!/^\d{1,15}$/.test(seq)) throw invalidCursor();
  return Number(seq);
}
