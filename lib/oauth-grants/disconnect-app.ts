import { and, eq, isNull } from "drizzle-orm";
import type { WriteCtx } from "../http/operation";
import { requireAthleteActor } from "../athletes/reach";
import { oauthCodes, oauthGrants, oauthTokenFamilies } from "../db/schema";
import { appendEvent } from "../events/append-event";
import { ApiError } from "../http/errors";
import { withdrawDeliveries } from "../webhooks/withdraw";
import type { DisconnectedApp } from "./schemas";

/**
 * Ends the actor's authorization of an app, in the caller's transaction: the grant and every token
 * family under it are revoked (access tokens are checked against both on every request, and
 * refresh tokens belong to a family), codes not yet exchanged are dropped, the athlete's
 * deliveries the app has not yet been sent are withdrawn, and
 * `athlete.deauthorized` goes to the outbox, the one event sent after an authorization ends
 * (CONTRACT §7). A grant already revoked, or another athlete's, is 404.
 */
export async function disconnectApp({ ctx, grantId }: { ctx: WriteCtx; grantId: string }): Promise<DisconnectedApp> {
  requireAthleteActor(ctx.actor);
  const athleteId = ctx.actor.userId;
  const tx = ctx.db;
  const now = new Date();
  const [grant] = await tx
    .update(oauthGrants)
    .set({ revokedAt: now })
    .where(and(eq(oauthGrants.id, grantId), eq(oauthGrants.userId, athleteId), isNull(oauthGrants.revokedAt)))
    .returning({ id: oauthGrants.id, clientId: oauthGrants.clientId });
  if (!grant) throw new ApiError("not_found", "No such connected app.");
  await tx
    .update(oauthTokenFamilies)
    .set({ revokedAt: now })
    .where(and(eq(oauthTokenFamilies.grantId, grant.id), isNull(oauthTokenFamilies.revokedAt)));
  await tx.delete(oauthCodes).where(and(eq(oauthCodes.grantId, grant.id), isNull(oauthCodes.usedAt)));
  // Events stop together with the access (SPEC §6.2): the athlete's deliveries still waiting to
  // be sent to the app (retries of a failing endpoint) are withdrawn.
  await withdrawDeliveries(tx, { clientId: grant.clientId, athleteId });
  await appendEvent(tx, {
    type: "athlete.deauthorized",
    athleteId,
    objectId: athleteId,
    objectType: "athlete",
    clientId: grant.clientId,
  });
  return { grant_id: grant.id, client_id: grant.clientId, revoked_at: now.toISOString() };
}
