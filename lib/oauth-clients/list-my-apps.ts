import { and, count, desc, eq, isNull } from "drizzle-orm";
import type { Ctx } from "../auth/actor";
import { requireAthleteActor } from "../athletes/reach";
import { oauthClients, oauthGrants } from "../db/schema";
import { toDeveloperApp } from "./owned-app";
import type { DeveloperApp } from "./schemas";

/** The apps the actor owns, newest first, each with how many athletes have it connected. */
export async function listMyApps({ ctx }: { ctx: Ctx }): Promise<DeveloperApp[]> {
  requireAthleteActor(ctx.actor);
  const rows = await ctx.db
    .select({ client: oauthClients, connected: count(oauthGrants.id) })
    .from(oauthClients)
    .leftJoin(oauthGrants, and(eq(oauthGrants.clientId, oauthClients.clientId), isNull(oauthGrants.revokedAt)))
    .where(eq(oauthClients.ownerId, ctx.actor.userId))
    .groupBy(oauthClients.clientId)
    .orderBy(desc(oauthClients.createdAt), oauthClients.clientId);
  return rows.map((r) => toDeveloperApp(r.client, Number(r.connected)));
}
