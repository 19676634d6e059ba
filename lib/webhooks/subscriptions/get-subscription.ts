import type { Ctx } from "../../auth/actor";
import { appIdOf, loadSubscription, toSubscriptionWire } from "./owned-subscription";
import type { Subscription } from "./schemas";

/** One of the app's subscriptions; another app's is 404. */
export async function getSubscription({ ctx, clientId, id }: { ctx: Ctx; clientId?: string; id: string }): Promise<Subscription> {
  const appId = await appIdOf(ctx, clientId);
  return toSubscriptionWire(await loadSubscription(ctx.db, appId, id));
}
