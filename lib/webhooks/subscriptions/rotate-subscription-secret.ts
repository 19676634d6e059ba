import { eq } from "drizzle-orm";
import type { WriteCtx } from "../../http/operation";
import { seal } from "../../crypto/seal";
import { webhookSubscriptions } from "../../db/schema";
import { generateToken } from "../../tokens/format";
import { appIdOf, loadSubscription, toSubscriptionWire } from "./owned-subscription";
import type { SubscriptionWithSecret } from "./schemas";

/** CONTRACT §5: after a rotation the previous secret also signs for this long. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3_600_000;

/**
 * A new signing secret, returned only here. For 24 hours deliveries carry two `v1=`
 * signatures, the new secret's and the one it replaces, so receivers can switch without
 * dropping a delivery (Stripe's rolling secrets). Rotating again in that time drops the
 * older one: only the secret current until now stays live beside the new one.
 */
export async function rotateSubscriptionSecret({
  ctx,
  clientId,
  id,
  nowMs = Date.now(),
}: {
  ctx: WriteCtx;
  clientId?: string;
  id: string;
  nowMs?: number;
}): Promise<SubscriptionWithSecret> {
  const appId = await appIdOf(ctx, clientId);
  const current = await loadSubscription(ctx.db, appId, id, { forUpdate: true });
  const secret = generateToken("webhookSecret");
  const [row] = await ctx.db
    .update(webhookSubscriptions)
    .set({
      secretSealed: seal(secret),
      previousSecretSealed: current.secretSealed,
      previousSecretExpiresAt: new Date(nowMs + PREVIOUS_SECRET_TTL_MS),
      updatedAt: new Date(nowMs),
    })
    .where(eq(webhookSubscriptions.id, current.id))
    .returning();
  return { ...toSubscriptionWire(row!, nowMs), secret };
}
