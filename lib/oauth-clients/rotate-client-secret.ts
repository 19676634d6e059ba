import { eq } from "drizzle-orm";
import type { WriteCtx } from "../http/operation";
import { requireAthleteActor } from "../athletes/reach";
import { sha256Hex } from "../crypto/random";
import { oauthClients } from "../db/schema";
import { ApiError } from "../http/errors";
import { generateToken } from "../tokens/format";
import { connectedAthletes, loadOwnedApp, toDeveloperApp } from "./owned-app";
import type { AppWithSecret } from "./schemas";
import { announceClientChange } from "../oauth/client-cache";

/**
 * Replaces a confidential app's secret. The old one stops authenticating at once (only the
 * new hash is stored), and so do the client-credentials tokens it obtained: they carry a
 * fingerprint of the secret hash, checked against the app on every request
 * (lib/oauth/access-token.ts), because a rotation is the owner's answer to a leak. Athletes'
 * tokens keep working: rotation is about the app's credential, not their authorizations.
 */
export async function rotateClientSecret({ ctx, clientId }: { ctx: WriteCtx; clientId: string }): Promise<AppWithSecret> {
  requireAthleteActor(ctx.actor);
  const current = await loadOwnedApp(ctx.db, ctx.actor.userId, clientId, { forUpdate: true });
  if (current.kind !== "confidential") {
    throw new ApiError("conflict", "A public app has no client secret: it authenticates with PKCE alone.");
  }
  const secret = generateToken("clientSecret");
  // Token endpoints (this process and every other) stop accepting the old secret from memory.
  await announceClientChange(ctx.db, clientId);
  const [row] = await ctx.db
    .update(oauthClients)
    .set({ secretHash: sha256Hex(secret) })
    .where(eq(oauthClients.clientId, clientId))
    .returning();
  return { app: toDeveloperApp(row!, await connectedAthletes(ctx.db, clientId)), client_secret: secret };
}

/**
 * The answer to a replayed registration (an `Idempotency-Key` replay: console-route.ts
 * `oneTimeSecret`): a confidential app's secret issued again, replacing the one the lost answer
 * carried; a public app's answer, which has none, as the app stands now. An app deleted since
 * is 409, and the person registers another.
 */
export async function reissueRegisteredSecret({ ctx, registered }: { ctx: WriteCtx; registered: AppWithSecret }): Promise<AppWithSecret> {
  requireAthleteActor(ctx.actor);
  try {
    if (registered.app.kind === "confidential") return await rotateClientSecret({ ctx, clientId: registered.app.client_id });
    const app = await loadOwnedApp(ctx.db, ctx.actor.userId, registered.app.client_id);
    return { app: toDeveloperApp(app, await connectedAthletes(ctx.db, app.clientId)), client_secret: null };
  } catch (err) {
    if (err instanceof ApiError && err.code === "not_found") {
      throw new ApiError("conflict", "The app this request registered has been deleted since: register a new one (with a new Idempotency-Key).");
    }
    throw err;
  }
}

/** A replayed registration's answer (console-route.ts `oneTimeSecret`): stored without its secret, answered with it issued again. */
export const registeredAppReplay = {
  strip: (answer: AppWithSecret): AppWithSecret => ({ ...answer, client_secret: null }),
  reissue: (ctx: WriteCtx, stored: AppWithSecret) => reissueRegisteredSecret({ ctx, registered: stored }),
};
