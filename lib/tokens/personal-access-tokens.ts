import { and, desc, eq, gt, isNull, not, or, sql, type SQL } from "drizzle-orm";
import type { z } from "zod";
import type { WriteCtx } from "../http/operation";
import type { Ctx } from "../auth/actor";
import { personalAccessTokens } from "../db/schema";
import { sha256Hex } from "../crypto/random";
import { ApiError } from "../http/errors";
import { assertRoom, CAPS } from "../http/caps";
import { newId } from "../ids";
import { requireAthleteActor } from "../athletes/reach";
import { generateToken, TOKEN_PREFIXES } from "./format";
import type { CreatedPat, CreatePatInput, PatSummary } from "./schemas";

function toSummary(t: typeof personalAccessTokens.$inferSelect): PatSummary {
  return {
    id: t.id,
    name: t.name,
    display: `${TOKEN_PREFIXES.pat}…${t.lastFour}`,
    scopes: t.scopes,
    created_at: t.createdAt.toISOString(),
    expires_at: t.expiresAt?.toISOString() ?? null,
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
    revoked_at: t.revokedAt?.toISOString() ?? null,
  };
}

/** A token not revoked and not expired. */
function inForce(): SQL {
  return and(isNull(personalAccessTokens.revokedAt), or(isNull(personalAccessTokens.expiresAt), gt(personalAccessTokens.expiresAt, new Date())))!;
}

/** Creates a PAT for the actor. The token is returned once here and stored only as a hash. */
export async function createPersonalAccessToken({ ctx, input }: { ctx: WriteCtx; input: z.output<typeof CreatePatInput> }) {
  requireAthleteActor(ctx.actor);
  if (ctx.actor.kind !== "session") throw new ApiError("insufficient_scope", "Tokens are created in the console.");
  const cap = CAPS.activeTokensPerPerson;
  await assertRoom(ctx.db, {
    table: personalAccessTokens,
    owner: ctx.actor.userId,
    where: and(eq(personalAccessTokens.userId, ctx.actor.userId), inForce()),
    cap,
    detail: `You have ${cap} tokens in force, the most one person may: revoke one you no longer use first.`,
  });
  const token = generateToken("pat");
  const expiresAt = input.expires_in_days ? new Date(Date.now() + input.expires_in_days * 86_400_000) : null;
  const [row] = await ctx.db
    .insert(personalAccessTokens)
    .values({
      id: newId("pat"),
      userId: ctx.actor.userId,
      name: input.name,
      tokenHash: sha256Hex(token),
      lastFour: token.slice(-4),
      scopes: [...new Set(input.scopes)],
      expiresAt,
    })
    .returning();
  return { token, summary: toSummary(row!) };
}

/**
 * A new secret for one of the actor's active tokens, replacing the one a create's lost answer
 * carried (an `Idempotency-Key` replay of that create: console-route.ts `oneTimeSecret`); the
 * token keeps its id, name, scopes and expiry. A token revoked or expired since is not renewed:
 * 409, and the person creates another.
 */
export async function reissuePersonalAccessToken({ ctx, tokenId }: { ctx: WriteCtx; tokenId: string }) {
  requireAthleteActor(ctx.actor);
  const token = generateToken("pat");
  const [row] = await ctx.db
    .update(personalAccessTokens)
    .set({ tokenHash: sha256Hex(token), lastFour: token.slice(-4) })
    .where(
      and(
        eq(personalAccessTokens.id, tokenId),
        eq(personalAccessTokens.userId, ctx.actor.userId),
        inForce(),
      ),
    )
    .returning();
  if (!row) throw new ApiError("conflict", "The token this request created has been revoked or has expired since: create a new one (with a new Idempotency-Key).");
  return { token, summary: toSummary(row) };
}

/** How many revoked or expired tokens the list shows, the most recently ended. */
export const ENDED_TOKENS_LISTED = 50;

/**
 * The actor's tokens, newest first: every one in force (the cap bounds them) and the
 * `ENDED_TOKENS_LISTED` that ended last, revoked or expired. Older ended ones stay stored, so a
 * request with one is still told `token_revoked`, but are not listed: creating and revoking in
 * a loop would otherwise grow the list without end.
 */
export async function listPersonalAccessTokens({ ctx }: { ctx: Ctx }): Promise<PatSummary[]> {
  requireAthleteActor(ctx.actor);
  const mine = eq(personalAccessTokens.userId, ctx.actor.userId);
  const [live, ended] = await Promise.all([
    ctx.db.select().from(personalAccessTokens).where(and(mine, inForce())),
    ctx.db
      .select()
      .from(personalAccessTokens)
      .where(and(mine, not(inForce())))
      .orderBy(desc(sql`coalesce(${personalAccessTokens.revokedAt}, ${personalAccessTokens.expiresAt})`), desc(personalAccessTokens.id))
      .limit(ENDED_TOKENS_LISTED),
  ]);
  return [...live, ...ended].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map(toSummary);
}

/** Revokes one of the actor's tokens; the very next request with it gets 401 `token_revoked`. */
export async function revokePersonalAccessToken({ ctx, tokenId }: { ctx: WriteCtx; tokenId: string }) {
  requireAthleteActor(ctx.actor);
  const rows = await ctx.db
    .update(personalAccessTokens)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(personalAccessTokens.id, tokenId),
        eq(personalAccessTokens.userId, ctx.actor.userId),
        isNull(personalAccessTokens.revokedAt),
      ),
    )
    .returning();
  if (!rows[0]) throw new ApiError("not_found", "No such active token.");
  return toSummary(rows[0]);
}

/** A replayed create's answer (console-route.ts `oneTimeSecret`): stored without its token, answered with the token issued again. */
export const createdPatReplay = {
  strip: (answer: z.output<typeof CreatedPat>) => ({ ...answer, token: "" }),
  reissue: (ctx: WriteCtx, stored: z.output<typeof CreatedPat>) => reissuePersonalAccessToken({ ctx, tokenId: stored.summary.id }),
};
