import { and, eq, isNull } from "drizzle-orm";
import type { Tx } from "../db/transaction";
import { oauthCodes, oauthGrants, oauthTokenFamilies } from "../db/schema";
import { appendEvent } from "../events/append-event";
import { withdrawDeliveries } from "../webhooks/withdraw";

/**
 * Ends an authorization, in the caller's transaction, whoever ends it (the athlete disconnecting
 * the app, or the token endpoint when a spent refresh token comes back, RFC 9700 §4.14.2): the
 * grant and every token family under it are revoked (access tokens are checked against both on
 * every request, and refresh tokens belong to a family), codes not yet exchanged are dropped,
 * the athlete's deliveries the app has not yet been sent are withdrawn, and
 * `athlete.deauthorized` goes to the outbox, the one event sent after an authorization ends
 * (CONTRACT §7). Undefined when the grant was already revoked (or is not the athlete's), and
 * then nothing is written: the event goes out once.
 */
export async function endGrant(tx: Tx, grantId: string, athleteId: string, now = new Date()): Promise<{ id: string; clientId: string } | undefined> {
  const [grant] = await tx
    .update(oauthGrants)
    .set({ revokedAt: now })
    .where(and(eq(oauthGrants.id, grantId), eq(oauthGrants.userId, athleteId), isNull(oauthGrants.revokedAt)))
    .returning({ id: oauthGrants.id, clientId: oauthGrants.clientId });
  if (!grant) return undefined;
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
  return grant;
}
