import { and, desc, eq, isNull } from "drizzle-orm";
import type { Ctx } from "../auth/actor";
import { requireAthleteActor } from "../athletes/reach";
import { isScope, SCOPES } from "../auth/scopes";
import { oauthClients, oauthGrants } from "../db/schema";
import type { ConnectedApp } from "./schemas";

/** The apps the actor has authorized and not disconnected, most recently changed first. */
export async function listConnectedApps({ ctx }: { ctx: Ctx }): Promise<ConnectedApp[]> {
  requireAthleteActor(ctx.actor);
  const rows = await ctx.db
    .select({ grant: oauthGrants, client: oauthClients })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.clientId, oauthGrants.clientId))
    .where(and(eq(oauthGrants.userId, ctx.actor.userId), isNull(oauthGrants.revokedAt)))
    .orderBy(desc(oauthGrants.updatedAt), oauthGrants.id);
  return rows.map(({ grant, client }) => ({
    grant_id: grant.id,
    client_id: client.clientId,
    name: client.name,
    logo_url: client.logoUrl,
    homepage_url: client.homepageUrl,
    scopes: grant.scopes.map((name) => ({ name, plain: isScope(name) ? SCOPES[name].plain : name })),
    authorized_at: grant.createdAt.toISOString(),
    updated_at: grant.updatedAt.toISOString(),
    last_used_at: grant.lastUsedAt?.toISOString() ?? null,
    kind: client.registration === "console" ? ("app" as const) : ("assistant" as const),
    host: client.registration === "console" ? null : client.sourceHost,
  }));
}
