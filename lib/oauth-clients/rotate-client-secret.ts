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
