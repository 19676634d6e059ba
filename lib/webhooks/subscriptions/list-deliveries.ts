import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import type { Ctx } from "../../auth/actor";
import { webhookDeliveries } from "../../db/schema";
import { page } from "../../http/pagination";
import { toDeliveriesWire } from "./delivery-wire";
import { decodeInstantCursor, epochMicros, instantOf } from "./instant-cursor";
import { appIdOf, loadSubscription } from "./owned-subscription";
import type { Delivery, ListDeliveriesQuery } from "./schemas";

/**
 * The subscription's delivery log, newest first: what was sent and what the endpoint
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
  if (query.cursor) {
    const [at, id] = decodeInstantCursor(query.cursor);
    where.push(sql`(${webhookDeliveries.createdAt}, ${webhookDeliveries.id}) < (${instantOf(at)}, ${id})`);
  }
  const rows = await ctx.db
    .select({ row: webhookDeliveries, at: epochMicros(webhookDeliveries.createdAt) })
    .from(webhookDeliveries)
    .where(and(...where))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(query.limit + 1);
  const p = page(rows, query.limit, (r) => [r.at, r.row.id]);
  return {
    data: await toDeliveriesWire(
      ctx.db,
      p.data.map((r) => r.row),
    ),
    next_cursor: p.next_cursor,
  };
}
