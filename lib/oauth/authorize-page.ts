import "server-only";
import { getDb } from "../db/client";
import { authorizationStep, decideAuthorization, type AuthorizationStep } from "./authorize";
import type { AuthorizeParams } from "./authorize-checks";
import { coachedTeamsSummary } from "../teams/coached-teams-summary";

// What /oauth/authorize's page and its consent action call. The database is opened here, as
// oauthEndpoint() opens it for the token and revocation routes, so nothing in app/ touches it.

/** GET /oauth/authorize: see `authorizationStep`. */
export async function authorizePageStep(params: AuthorizeParams, repeated: string[], userId: string | null) {
  const db = await getDb();
  const step = await authorizationStep(db, params, repeated, userId);
  // A coach's token also reaches their teams' athletes: the consent screen says whose.
  if (step.kind !== "consent") return step;
  return { ...step, coachedTeams: userId ? await coachedTeamsSummary(db, userId) : [] };
}

/** The consent form's field that names the account its screen was shown to (`consentAnswer`). */
export const SHOWN_TO_FIELD = "shown_to";

/**
 * The consent form's answer: see `decideAuthorization`. `shownTo` is the account the screen was
 * shown to ("Signed in as …"): when the browser's session is now someone else's (signed in in
 * another tab since), nothing is decided, for either of them, and the screen is asked for again,
 * which shows it to the person signed in now.
 */
export async function consentAnswer(
  params: AuthorizeParams,
  userId: string,
  decision: "allow" | "deny",
  shownTo: string | null,
): Promise<AuthorizationStep | { kind: "ask_again" }> {
  if (shownTo !== userId) return { kind: "ask_again" };
  return decideAuthorization(await getDb(), params, userId, decision);
}
