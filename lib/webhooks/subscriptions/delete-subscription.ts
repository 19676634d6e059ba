import { and, eq } from "drizzle-orm";
import type { WriteCtx } from "../../http/operation";
import { webhookSubscriptions } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { appIdOf } from "./owned-subscription";

/** Deletes the subscription with its deliveries and their log; nothing more is sent to it. */
export async function deleteSubscription({ ctx, clientId, id }: { ctx: WriteCtx; clientId?: string; id: string }): Promise<void> {
  const appId = await appIdOf(ctx, clientId);
  const gone = await ctx.db
    .delete(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.clientId, appId)))
    .returning({ id: webhookSubscriptions.id });
  if (!gone.length) throw new ApiError("not_found", `The app has no webhook subscription ${id}.`);
}
