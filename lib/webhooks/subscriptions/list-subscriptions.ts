import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Ctx } from "../../auth/actor";
import { webhookSubscriptions } from "../../db/schema";
import { page } from "../../http/pagination";
import { decodeInstantCursor, epochMicros, instantOf } from "./instant-cursor";
import { appIdOf, toSubscriptionWire } from "./owned-subscription";
import type { ListSubscriptionsQuery, Subscription } from "./schemas";

/** The app's subscriptions, oldest first, each with its `consecutive_failures` (SPEC §4.3). */
export async function listSubscriptions({
  ctx,
  clientId,
  query,
}: {
  ctx: Ctx;
  clientId?: string;
  query: z.output<typeof ListSubscriptionsQuery>;
}): Promise<{ data: Subscription[]; next_cursor: string | null }> {
  const appId = await appIdOf(ctx, clientId);
  const where: SQL[] = [eq(webhookSubscriptions.clientId, appId)];
  if (query.cursor) {
    const [at, id] = decodeInstantCursor(query.cursor);
    where.push(sql`(${webhookSubscriptions.createdAt}, ${webhookSubscriptions.id}) > (${instantOf(at)}, ${id})`);
  }
  const rows = await ctx.db
    .select({ row: webhookSubscriptions, at: epochMicros(webhookSubscriptions.createdAt) })
    .from(webhookSubscriptions)
    .where(and(...where))
    .orderBy(asc(webhookSubscriptions.createdAt), asc(webhookSubscriptions.id))
    .limit(query.limit + 1);
  const p = page(rows, query.limit, (r) => [r.at, r.row.id]);
  return { data: p.data.map((r) => toSubscriptionWire(r.row)), next_cursor: p.next_cursor };
}
