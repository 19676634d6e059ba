import "server-only";
import { getDb } from "../db/client";
import { authorizationStep, decideAuthorization } from "./authorize";
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

/** The consent form's answer: see `decideAuthorization`. */
export async function consentAnswer(params: AuthorizeParams, userId: string, decision: "allow" | "deny") {
  return decideAuthorization(await getDb(), params, userId, decision);
}
