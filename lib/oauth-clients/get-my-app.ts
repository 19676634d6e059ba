import type { Ctx } from "../auth/actor";
import { requireAthleteActor } from "../athletes/reach";
import { connectedAthletes, loadOwnedApp, toDeveloperApp } from "./owned-app";
import type { DeveloperApp } from "./schemas";

/** One app the actor owns; anyone else's, or none, is 404. */
export async function getMyApp({ ctx, clientId }: { ctx: Ctx; clientId: string }): Promise<DeveloperApp> {
  requireAthleteActor(ctx.actor);
  const row = await loadOwnedApp(ctx.db, ctx.actor.userId, clientId);
  return toDeveloperApp(row, await connectedAthletes(ctx.db, clientId));
}
