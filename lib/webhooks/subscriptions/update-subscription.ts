import { and, eq, exists, gte, or, sql } from "drizzle-orm";
import type { z } from "zod";
import type { WriteCtx } from "../../http/operation";
import type { Ctx } from "../../auth/actor";
import { webhookAttempts, webhookDeliveries, webhookSubscriptions } from "../../db/schema";
import { verifyEndpoint } from "../handshake";
import { allowPrivateNetworks, appIdOf, loadSubscription, toSubscriptionWire, type SubscriptionRow } from "./owned-subscription";
import { requeueDeliveries } from "./requeue";
import type { UpdateSubscriptionInput, UpdatedSubscription } from "./schemas";
import { checkWebhookUrl, requestedUrl } from "./webhook-url";
import { assertUrlFree } from "./create-subscription";
import { seal, unseal } from "../../crypto/seal";

/**
 * The `hub.verify_token` of an update's handshake: the one the update sends, else the one the
 * app chose before (kept sealed), else none (the handshake generates one).
 */
function verifyTokenFor(input: UpdateSubscriptionInput, row: SubscriptionRow): string | undefined {
  return input.verify_token ?? (row.verifyTokenSealed === null ? undefined : unseal(row.verifyTokenSealed));
}

export const DISABLED_BY_DEVELOPER = "Disabled by the app's developer.";

/**
 * The deliveries that failed during the streak of failures that began at `since`: those that
 * ran out of attempts in it, and those failed when the subscription was disabled (CONTRACT §7,
 * "Re-enable and redeliver").
 */
function failedSince(subscriptionId: string, since: Date) {
  const attemptedSince = exists(
    sql`(select 1 from ${webhookAttempts} where ${webhookAttempts.deliveryId} = ${webhookDeliveries.id} and ${webhookAttempts.startedAt} >= ${since.toISOString()}::timestamptz)`,
  );
  return and(
    eq(webhookDeliveries.subscriptionId, subscriptionId),
    eq(webhookDeliveries.status, "failed"),
    or(gte(webhookDeliveries.updatedAt, since), gte(webhookDeliveries.createdAt, since), attemptedSince),
  )!;
}

/**
 * Changes a subscription. A new URL is verified with a fresh handshake before it replaces the
 * old one; `status: "active"` re-enables a disabled subscription after a fresh handshake and
 * starts its failure count again; with `redeliver_failed` it also queues again every delivery
 * that failed since the streak began. If a handshake fails nothing changes.
 */
export async function updateSubscription({
  ctx,
  clientId,
  id,
  input,
  nowMs = Date.now(),
  verifiedUrl,
}: {
  ctx: WriteCtx;
  clientId?: string;
  id: string;
  input: UpdateSubscriptionInput;
  nowMs?: number;
  /** The URL `verifyUpdatedSubscription` already verified before the transaction, if any. */
  verifiedUrl?: string;
}): Promise<z.input<typeof UpdatedSubscription>> {
  const appId = await appIdOf(ctx, clientId);
  const before = await loadSubscription(ctx.db, appId, id);
  const allowPrivate = allowPrivateNetworks();
  // A new URL verifyUpdatedSubscription already checked and verified before the transaction is
  // not checked again in it (its rules, a DNS lookup, the app's other subscriptions).
  const asked = input.url === undefined ? undefined : requestedUrl(input.url);
  const newUrl = asked === undefined || asked === before.url ? undefined : asked === verifiedUrl ? asked : await checkWebhookUrl(input.url!, allowPrivate);
  if (newUrl && newUrl !== verifiedUrl) await assertUrlFree(ctx.db, appId, newUrl, id);
  let verified = verifiedUrl !== undefined && verifiedUrl === (newUrl ?? before.url);
  const verify = async () => {
    await verifyEndpoint(newUrl ?? before.url, { verifyToken: verifyTokenFor(input, before), allowPrivate });
    verified = true;
  };
  // The handshake runs before the row is locked, so deliveries are not held up while it waits.
  if (!verified && (newUrl || (input.status === "active" && before.status === "disabled"))) await verify();

  const current: SubscriptionRow = await loadSubscription(ctx.db, appId, id, { forUpdate: true });
  const reenable = input.status === "active" && current.status === "disabled";
  const disable = input.status === "disabled" && current.status === "active";
  if (reenable && !verified) await verify();

  const now = new Date(nowMs);
  const set: Partial<typeof webhookSubscriptions.$inferInsert> = { updatedAt: now };
  if (newUrl) set.url = newUrl;
  if (input.events) set.events = input.events;
  // A token the update sends is the one later handshakes send.
  if (input.verify_token !== undefined) set.verifyTokenSealed = seal(input.verify_token);
  if (reenable) Object.assign(set, { status: "active", consecutiveFailures: 0, failingSince: null, disabledAt: null, disabledReason: null });
  if (disable) Object.assign(set, { status: "disabled", disabledAt: now, disabledReason: DISABLED_BY_DEVELOPER });
  const [row] = await ctx.db.update(webhookSubscriptions).set(set).where(eq(webhookSubscriptions.id, id)).returning();

  if (disable) {
    await ctx.db
      .update(webhookDeliveries)
      .set({ status: "failed", failureReason: "subscription_disabled", updatedAt: now })
      .where(and(eq(webhookDeliveries.subscriptionId, id), eq(webhookDeliveries.status, "pending")));
  }
  let redelivered: number | undefined;
  if (input.redeliver_failed) {
    const since = current.failingSince ?? current.disabledAt;
    redelivered = since ? (await requeueDeliveries(ctx.db, failedSince(id, since), { wholeSubscription: id })).length : 0;
  }
  return { ...toSubscriptionWire(row!, nowMs), ...(redelivered !== undefined ? { redelivered } : {}) };
}

/**
 * The handshake an update needs (a new URL, or re-enabling), run before the write's
 * transaction; returns the URL it verified. `updateSubscription` checks again under its lock.
 */
export async function verifyUpdatedSubscription({
  ctx,
  clientId,
  id,
  input,
}: {
  ctx: Ctx;
  clientId?: string;
  id: string;
  input: UpdateSubscriptionInput;
}): Promise<string | undefined> {
  const appId = await appIdOf(ctx, clientId);
  const current = await loadSubscription(ctx.db, appId, id);
  const allowPrivate = allowPrivateNetworks();
  const url = input.url !== undefined && requestedUrl(input.url) !== current.url ? await checkWebhookUrl(input.url, allowPrivate) : current.url;
  if (url === current.url && !(input.status === "active" && current.status === "disabled")) return undefined;
  if (url !== current.url) await assertUrlFree(ctx.db, appId, url, id);
  await verifyEndpoint(url, { verifyToken: verifyTokenFor(input, current), allowPrivate });
  return url;
}
