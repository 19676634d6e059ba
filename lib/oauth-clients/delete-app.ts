import { and, eq, inArray } from "drizzle-orm";
import type { WriteCtx } from "../http/operation";
import { requireAthleteActor } from "../athletes/reach";
import { oauthClients, rateLimitCounters } from "../db/schema";
import { ApiError } from "../http/errors";
import { announceClientChange } from "../oauth/client-cache";

/**
 * Deletes an app the actor owns. The schema cascades to its grants, token families, codes
 * and refresh tokens, so every authorization and token issued to it ends with it: access
 * tokens are checked against their grant on every request.
 */
export async function deleteApp({ ctx, clientId }: { ctx: WriteCtx; clientId: string }): Promise<{ client_id: string; deleted: true }> {
  requireAthleteActor(ctx.actor);
  const deleted = await ctx.db
    .delete(oauthClients)
    .where(and(eq(oauthClients.clientId, clientId), eq(oauthClients.ownerId, ctx.actor.userId)))
    .returning({ clientId: oauthClients.clientId });
  if (!deleted[0]) throw new ApiError("not_found", `You have no app with client_id ${clientId}.`);
  // Token endpoints (this process and every other) forget the app now, not when a copy ages out.
  await announceClientChange(ctx.db, clientId);
  // Its usage record goes too, rather than waiting for the daily prune.
  await ctx.db
    .delete(rateLimitCounters)
    .where(inArray(rateLimitCounters.bucket, [`app:${clientId}:15m`, `app:${clientId}:1d`]));
  return { client_id: clientId, deleted: true };
}
