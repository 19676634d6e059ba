import { and, eq, ne } from "drizzle-orm";
import type { WriteCtx } from "../../http/operation";
import type { Ctx } from "../../auth/actor";
import { seal } from "../../crypto/seal";
import type { Db } from "../../db/client";
import { oauthClients, webhookSubscriptions } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { assertRoom, CAPS } from "../../http/caps";
import { generateToken } from "../../tokens/format";
import { verifyEndpoint } from "../handshake";
import { allowPrivateNetworks, appIdOf, newSubscriptionId, toSubscriptionWire } from "./owned-subscription";
import type { CreateSubscriptionInput, SubscriptionWithSecret } from "./schemas";
import { checkWebhookUrl } from "./webhook-url";

/**
 * The app's room for one more subscription. Without assertRoom's lock: in the write's
 * transaction the app's row, taken FOR UPDATE first, already makes creations for one app take
 * turns, and a second lock taken in another order (the check before the transaction, which may
 * run inside one in a test) could only deadlock with it.
 */
function assertRoomFor(db: Db, appId: string): Promise<void> {
  const cap = CAPS.subscriptionsPerApp;
  return assertRoom(db, {
    table: webhookSubscriptions,
    owner: appId,
    where: eq(webhookSubscriptions.clientId, appId),
    cap,
    detail: `An app may have at most ${cap} webhook subscriptions; delete one first.`,
    lock: false,
  });
}

/**
 * 409 when the app already has a subscription to `url` (other than `exceptId`): a second one would
 * send every event there twice, each signed with its own secret (GitHub refuses a second hook to
 * a URL too). Its events are what to change instead.
 */
export async function assertUrlFree(db: Db, appId: string, url: string, exceptId?: string): Promise<void> {
  const [row] = await db
    .select({ id: webhookSubscriptions.id })
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.clientId, appId), eq(webhookSubscriptions.url, url), exceptId ? ne(webhookSubscriptions.id, exceptId) : undefined))
    .limit(1);
  if (row) {
    throw new ApiError("conflict", `The app already has a webhook subscription to ${url} (${row.id}); change its events instead of subscribing the URL again.`, {
      errors: [{ field: "url", code: "conflict", detail: `The app already has an endpoint at this URL (${row.id}): change its events instead.` }],
    });
  }
}

/**
 * Subscribes the app to `input.events` at `input.url`. The verification handshake runs
 * inline (SPEC §4.4) and nothing is created unless it completes. The signing secret is
 * returned only here and rests sealed.
 */
export async function createSubscription({
  ctx,
  clientId,
  input,
  verified,
}: {
  ctx: WriteCtx;
  clientId?: string;
  input: CreateSubscriptionInput;
  /** From `verifyNewSubscription`, run before the transaction; done here when absent. */
  verified?: VerifiedEndpoint;
}): Promise<SubscriptionWithSecret> {
  const appId = await appIdOf(ctx, clientId);
  const { url } = verified ?? (await verifyNewSubscription({ ctx, clientId, input }));
  // Creations for one app take turns from here, so two at once cannot pass the limit together.
  await ctx.db.select({ id: oauthClients.clientId }).from(oauthClients).where(eq(oauthClients.clientId, appId)).for("update");
  await assertRoomFor(ctx.db, appId);
  await assertUrlFree(ctx.db, appId, url);
  const secret = generateToken("webhookSecret");
  const [row] = await ctx.db
    .insert(webhookSubscriptions)
    .values({
      id: newSubscriptionId(),
      clientId: appId,
      url,
      events: input.events,
      secretSealed: seal(secret),
      verifyTokenSealed: input.verify_token === undefined ? null : seal(input.verify_token),
    })
    .returning();
  return { ...toSubscriptionWire(row!), secret };
}

export type VerifiedEndpoint = { url: string };

/**
 * Everything about a new subscription that needs no lock: the URL's rules, the app's room and
 * the handshake. Routes run it before opening the write's transaction, so a slow endpoint
 * holds no connection or lock while it answers.
 */
export async function verifyNewSubscription({
  ctx,
  clientId,
  input,
}: {
  ctx: Ctx;
  clientId?: string;
  input: CreateSubscriptionInput;
}): Promise<VerifiedEndpoint> {
  const appId = await appIdOf(ctx, clientId);
  const allowPrivate = allowPrivateNetworks();
  const url = await checkWebhookUrl(input.url, allowPrivate);
  await assertRoomFor(ctx.db, appId);
  await assertUrlFree(ctx.db, appId, url);
  await verifyEndpoint(url, { verifyToken: input.verify_token, allowPrivate });
  return { url };
}
