import { and, eq } from "drizzle-orm";
import type { Ctx } from "../../auth/actor";
import { randomBase62 } from "../../crypto/random";
import type { Db } from "../../db/client";
import { webhookSubscriptions } from "../../db/schema";
import { getEnv } from "../../env";
import { ApiError } from "../../http/errors";
import { loadOwnedApp } from "../../oauth-clients/owned-app";
import type { Subscription } from "./schemas";

export type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;


/** A subscription's id (`whs_…`), made as lib/ids.ts makes the others. */
export function newSubscriptionId(): string {
  return `whs_${randomBase62(22)}`;
}

/**
 * The app the actor acts for: a client-credentials token acts for its own app; a console
 * session for an app the person owns (anyone else's is the same 404 as none). Every verb of
 * this domain starts here.
 */
export async function appIdOf(ctx: Ctx, clientId?: string): Promise<string> {
  if (ctx.actor.kind === "app") return ctx.actor.clientId;
  if (ctx.actor.kind === "session") return (await loadOwnedApp(ctx.db, ctx.actor.userId, clientId ?? "")).clientId;
  throw new ApiError("client_credentials_required", "Webhook subscriptions are managed with a client-credentials token.");
}

/** One of the app's subscriptions; another app's is the same 404 as one that does not exist. */
/**
 * `forUpdate` locks the row against every other writer; `forShare` only against deletion and
 * change, for a write that adds rows pointing at it (a test event, a redelivery), so a delete
 * running at the same moment either waits or leaves it a clean 404, never a foreign-key error.
 */
export async function loadSubscription(
  db: Db,
  appId: string,
  id: string,
  opts: { forUpdate?: boolean; forShare?: boolean } = {},
): Promise<SubscriptionRow> {
  const q = db
    .select()
    .from(webhookSubscriptions)
    .where(and(eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.clientId, appId)))
    .limit(1);
  const [row] = opts.forUpdate ? await q.for("update") : opts.forShare ? await q.for("share") : await q;
  if (!row) throw new ApiError("not_found", `The app has no webhook subscription ${id}.`);
  return row;
}

/** Private addresses and `http://` are allowed only when the service is configured so. */
export function allowPrivateNetworks(): boolean {
  return getEnv().webhooksAllowPrivateNetworks;
}

/** The wire shape: never a secret. */
export function toSubscriptionWire(row: SubscriptionRow, nowMs = Date.now()): Subscription {
  const previousLive = row.previousSecretExpiresAt && row.previousSecretExpiresAt.getTime() > nowMs ? row.previousSecretExpiresAt : null;
  return {
    id: row.id,
    url: row.url,
    events: row.events as Subscription["events"],
    status: row.status,
    consecutive_failures: row.consecutiveFailures,
    failing_since: row.failingSince?.toISOString() ?? null,
    disabled_at: row.disabledAt?.toISOString() ?? null,
    disabled_reason: row.disabledReason,
    previous_secret_expires_at: previousLive?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
