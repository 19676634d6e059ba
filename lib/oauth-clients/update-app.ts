import { eq } from "drizzle-orm";
import type { WriteCtx } from "../http/operation";
import { requireAthleteActor } from "../athletes/reach";
import { oauthClients } from "../db/schema";
import { connectedAthletes, loadOwnedApp, toDeveloperApp } from "./owned-app";
import { assertValidRedirectUris } from "./redirect-uris";
import type { DeveloperApp, UpdateAppInput } from "./schemas";
import { announceClientChange } from "../oauth/client-cache";

/**
 * Changes the members sent. Removing a redirect URI takes effect on the next authorization
 * request; tokens already issued are unaffected (they are not bound to a redirect URI).
 */
export async function updateApp({ ctx, clientId, input }: { ctx: WriteCtx; clientId: string; input: UpdateAppInput }): Promise<DeveloperApp> {
  requireAthleteActor(ctx.actor);
  const current = await loadOwnedApp(ctx.db, ctx.actor.userId, clientId, { forUpdate: true });
  const set: Partial<typeof oauthClients.$inferInsert> = {};
  if (input.name !== undefined) set.name = input.name;
  if (input.redirect_uris !== undefined) set.redirectUris = assertValidRedirectUris(input.redirect_uris, current.kind, current.redirectUris);
  if (input.logo_url !== undefined) set.logoUrl = input.logo_url;
  if (input.homepage_url !== undefined) set.homepageUrl = input.homepage_url;
  if (Object.keys(set).length) await announceClientChange(ctx.db, clientId);
  const row = Object.keys(set).length
    ? (await ctx.db.update(oauthClients).set(set).where(eq(oauthClients.clientId, clientId)).returning())[0]!
    : current;
  return toDeveloperApp(row, await connectedAthletes(ctx.db, clientId));
}
