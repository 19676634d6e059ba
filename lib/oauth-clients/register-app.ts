import { eq } from "drizzle-orm";
import type { WriteCtx } from "../http/operation";
import { assertRoom, CAPS } from "../http/caps";
import { requireAthleteActor } from "../athletes/reach";
import { sha256Hex } from "../crypto/random";
import { oauthClients } from "../db/schema";
import { generateToken } from "../tokens/format";
import { newClientId } from "./client-id";
import { toDeveloperApp } from "./owned-app";
import { assertValidRedirectUris } from "./redirect-uris";
import type { AppWithSecret, RegisterAppInput } from "./schemas";

const ID_ATTEMPTS = 5;

/**
 * Registers an app owned by the actor. A confidential app gets a client secret, returned
 * only here and stored only as its SHA-256 (CONTRACT §6); a public app gets none and
 * authenticates by PKCE alone.
 */
export async function registerApp({ ctx, input }: { ctx: WriteCtx; input: RegisterAppInput }): Promise<AppWithSecret> {
  requireAthleteActor(ctx.actor);
  const redirectUris = assertValidRedirectUris(input.redirect_uris, input.kind);
  const cap = CAPS.appsPerPerson;
  await assertRoom(ctx.db, {
    table: oauthClients,
    owner: ctx.actor.userId,
    where: eq(oauthClients.ownerId, ctx.actor.userId),
    cap,
    detail: `You have ${cap} apps, the most one developer may: delete one you no longer use first.`,
  });
  const secret = input.kind === "confidential" ? generateToken("clientSecret") : null;
  for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
    const [row] = await ctx.db
      .insert(oauthClients)
      .values({
        clientId: newClientId(input.name),
        ownerId: ctx.actor.userId,
        name: input.name,
        kind: input.kind,
        secretHash: secret ? sha256Hex(secret) : null,
        redirectUris,
        logoUrl: input.logo_url ?? null,
        homepageUrl: input.homepage_url ?? null,
      })
      .onConflictDoNothing({ target: oauthClients.clientId })
      .returning();
    if (row) return { app: toDeveloperApp(row, 0), client_secret: secret };
  }
  throw new Error(`no free client_id for "${input.name}" after ${ID_ATTEMPTS} attempts`);
}
