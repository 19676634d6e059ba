import type { WriteCtx } from "../http/operation";
import { requireAthleteActor } from "../athletes/reach";
import { ApiError } from "../http/errors";
import { endGrant } from "./end-grant";
import type { DisconnectedApp } from "./schemas";

/**
 * Ends the actor's authorization of an app (`endGrant`: tokens, codes, waiting deliveries, and
 * `athlete.deauthorized`). A grant already revoked, or another athlete's, is 404.
 */
export async function disconnectApp({ ctx, grantId }: { ctx: WriteCtx; grantId: string }): Promise<DisconnectedApp> {
  requireAthleteActor(ctx.actor);
  const now = new Date();
  const grant = await endGrant(ctx.db, grantId, ctx.actor.userId, now);
  if (!grant) throw new ApiError("not_found", "No such connected app.");
  return { grant_id: grant.id, client_id: grant.clientId, revoked_at: now.toISOString() };
}
