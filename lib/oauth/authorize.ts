import "server-only";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { oauthCodes, oauthGrants, type TokenResource } from "../db/schema";
import { randomBase62, sha256Hex } from "../crypto/random";
import { getEnv } from "../env";
import { newId } from "../ids";
import { SCOPE_NAMES, type Scope } from "../auth/scopes";
import { OAuthError } from "./errors";
import { findClient } from "./client-auth";
import { ClientMetadataError, isMetadataDocumentUrl, metadataDocumentClient } from "./client-metadata";
import {
  checkNoRepeats,
  checkPkce,
  checkRedirectUri,
  checkResource,
  checkResponseType,
  checkScope,
  checkState,
  redirectDestination,
  severalResources,
  UnsafeToRedirect,
  type AuthorizeParams,
} from "./authorize-checks";

export const CODE_TTL_S = 60;

export type ValidAuthorization = {
  client: {
    clientId: string;
    name: string;
    kind: "confidential" | "public";
    logoUrl: string | null;
    homepageUrl: string | null;
    /** Where a client the service has not reviewed comes from (a metadata document's host, a registered client's first redirect host); null for apps registered in the console. */
    unreviewedFrom: string | null;
  };
  redirectUri: string;
  scopes: Scope[];
  state: string | undefined;
  codeChallenge: string;
  /** The resource the tokens will be for (RFC 8707): `/v1` unless the request named `/mcp`. */
  resource: TokenResource;
};

export type AuthorizationStep =
  /** Shown, with nowhere to go back to: the client or redirect URI is not verified. */
  | { kind: "error_page"; message: string }
  /**
   * Shown, with a link back to the app carrying the error (RFC 6749 §4.1.2.1) that the athlete
   * may follow: the redirect URI is the app's, but the athlete has not trusted the app.
   */
  | { kind: "error_return"; message: string; clientId: string; appName: string; returnUrl: string; returnHost: string }
  | { kind: "redirect"; url: string }
  /**
   * `askedScopes`: what this request asks for, which its code will carry; `newScopes`: those of
   * them not yet granted; `grantedScopes`: the whole grant so far (which may hold more).
   */
  | { kind: "consent"; request: ValidAuthorization; askedScopes: Scope[]; newScopes: Scope[]; grantedScopes: Scope[] };

/** What the authorization page does for a visitor who may not be signed in yet. */
export type AuthorizationPageStep = AuthorizationStep | { kind: "sign_in" };

/** The redirect back to the app, with `iss` as RFC 9207 asks. */
export function redirectBack(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  url.searchParams.set("iss", getEnv().baseUrl);
  return url.toString();
}

/**
 * Runs every check of the authorization request. Errors before the client and redirect URI
 * are verified are shown on a page (`error_page`). Later ones are `error_return`: shown on a
 * page with a link back to the app, and redirected automatically only once the signed-in
 * athlete turns out to trust the app (see `trusted`).
 */
export async function validateAuthorizationRequest(
  db: Db,
  params: AuthorizeParams,
  repeated: string[],
  /** The signed-in athlete, for whom a client's metadata document may be fetched (counted); none fetches nothing. */
  userId: string | null,
): Promise<{ ok: true; request: ValidAuthorization } | { ok: false; step: AuthorizationStep }> {
  let client: Awaited<ReturnType<typeof findClient>>;
  try {
    const named = !params.client_id || repeated.includes("client_id") ? undefined : params.client_id;
    if (named && isMetadataDocumentUrl(named)) {
      if (!userId) return { ok: false, step: { kind: "error_page", message: "Sign in to open this link: it names an app by its metadata document." } };
      client = await metadataDocumentClient(db, named, userId);
    } else client = named ? await findClient(db, named) : undefined;
  } catch (err) {
    if (!(err instanceof ClientMetadataError)) throw err;
    return { ok: false, step: { kind: "error_page", message: `This link names an app by its metadata document at ${params.client_id}, which cannot be used: ${err.message}.` } };
  }
  if (!client) {
    // Each says what is wrong with the link: a developer reads it to fix theirs.
    const message = !params.client_id
      ? "This link does not name an app: it has no client_id."
      : repeated.includes("client_id")
        ? "This link names its app more than once: client_id was sent more than once."
        : "This link names an app that is not registered here.";
    return { ok: false, step: { kind: "error_page", message } };
  }
  let redirectUri: string;
  try {
    if (repeated.includes("redirect_uri")) throw new UnsafeToRedirect("redirect_uri was sent more than once.");
    redirectUri = checkRedirectUri(client, params.redirect_uri);
  } catch (err) {
    if (err instanceof UnsafeToRedirect) return { ok: false, step: { kind: "error_page", message: err.message } };
    throw err;
  }
  try {
    // `resource` is marked repeated only when its values differ (readAuthorizeParams).
    if (repeated.includes("resource")) throw severalResources();
    checkNoRepeats(repeated);
    checkState(params.state);
    checkResponseType(params.response_type);
    const codeChallenge = checkPkce(params.code_challenge, params.code_challenge_method);
    const resource = checkResource(params.resource, getEnv());
    const scopes = checkScope(params.scope, resource);
    return {
      ok: true,
      request: {
        client: {
          clientId: client.clientId,
          name: client.name,
          kind: client.kind,
          logoUrl: client.logoUrl,
          homepageUrl: client.homepageUrl,
          unreviewedFrom: client.registration === "console" ? null : (client.sourceHost ?? new URL(client.redirectUris[0]!).host),
        },
        redirectUri,
        scopes,
        state: params.state,
        codeChallenge,
        resource,
      },
    };
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    const returnUrl = redirectBack(redirectUri, { error: err.error, error_description: err.description, state: params.state });
    return {
      ok: false,
      step: { kind: "error_return", message: err.description, clientId: client.clientId, appName: client.name, returnUrl, returnHost: redirectDestination(redirectUri) },
    };
  }
}

/**
 * Whether an error may be redirected to the app without asking: only when the signed-in
 * athlete already holds an authorization of it, that is chose to trust it and its redirect
 * URIs. Anyone can register an app with any redirect URI, so an error redirect for an app the
 * athlete never trusted would make this service an open redirector (RFC 9700 §4.11.2): such
 * errors are shown instead, with a link the athlete may follow.
 */
async function trusted(db: Db, step: AuthorizationStep, userId: string): Promise<AuthorizationStep> {
  if (step.kind !== "error_return") return step;
  return (await activeGrant(db, step.clientId, userId)) ? { kind: "redirect", url: step.returnUrl } : step;
}

async function activeGrant(db: Db, clientId: string, userId: string, opts: { lock?: boolean } = {}) {
  const query = db
    .select()
    .from(oauthGrants)
    .where(and(eq(oauthGrants.clientId, clientId), eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt)))
    .limit(1);
  const [grant] = await (opts.lock ? query.for("update") : query);
  return grant;
}

/**
 * What the signed-in athlete sees: the consent screen, every time (CONTRACT §9: after sign-in
 * it names the app and each scope asked, with "Allow" and "Deny"), marking what is new beside
 * what the app already holds. Not skipped for an app that already holds every scope: the athlete
 * may mean to say no this time, and a public app's identity cannot be assured anyway (any program
 * on the device can claim its client_id and loopback redirect: RFC 8252 §8.6, RFC 9700 §2.1).
 */
export async function prepareAuthorization(db: Db, params: AuthorizeParams, repeated: string[], userId: string): Promise<AuthorizationStep> {
  const v = await validateAuthorizationRequest(db, params, repeated, userId);
  if (!v.ok) return trusted(db, v.step, userId);
  const grant = await activeGrant(db, v.request.client.clientId, userId);
  const granted = new Set(grant?.scopes ?? []);
  const newScopes = v.request.scopes.filter((s) => !granted.has(s));
  return {
    kind: "consent",
    request: v.request,
    askedScopes: SCOPE_NAMES.filter((s) => v.request.scopes.includes(s)),
    newScopes,
    grantedScopes: SCOPE_NAMES.filter((s) => granted.has(s)),
  };
}

/**
 * What GET /oauth/authorize does next, for a visitor signed in (`userId`) or not. An unverified
 * client or redirect URI is shown to anyone, never redirected; anything else, errors included,
 * waits for sign-in: nothing goes back to an app before the athlete is known (RFC 9700 §4.11.2).
 */
export async function authorizationStep(
  db: Db,
  params: AuthorizeParams,
  repeated: string[],
  userId: string | null,
): Promise<AuthorizationPageStep> {
  if (userId) return prepareAuthorization(db, params, repeated, userId);
  // A client named by its metadata document is fetched only for someone signed in: a link
  // opened by anyone must not make the service fetch addresses on their behalf.
  if (params.client_id && isMetadataDocumentUrl(params.client_id)) return { kind: "sign_in" };
  const v = await validateAuthorizationRequest(db, params, repeated, null);
  return !v.ok && v.step.kind === "error_page" ? v.step : { kind: "sign_in" };
}

/**
 * The athlete's answer on the consent screen. The request is validated again: the form is input
 * too. Deny goes back to the app: the consent screen named where it would go (RFC 9700 §4.11.2
 * leaves the decision to an informed athlete).
 */
export async function decideAuthorization(
  db: Db,
  params: AuthorizeParams,
  userId: string,
  decision: "allow" | "deny",
): Promise<AuthorizationStep> {
  const v = await validateAuthorizationRequest(db, params, [], userId);
  if (!v.ok) return trusted(db, v.step, userId);
  if (decision === "deny") {
    return {
      kind: "redirect",
      url: redirectBack(v.request.redirectUri, { error: "access_denied", error_description: "The athlete denied access.", state: v.request.state }),
    };
  }
  return { kind: "redirect", url: await issueCode(db, v.request, userId) };
}

/** Records the grant (adding the scopes just approved) and a 60-second single-use code. */
async function issueCode(db: Db, request: ValidAuthorization, userId: string): Promise<string> {
  const code = randomBase62(43);
  await db.transaction(async (tx) => {
    // The grant row is locked, so two approvals at once each add their scopes to the other's
    // instead of overwriting them; a grant inserted concurrently is read back and added to.
    let grant = await activeGrant(tx, request.client.clientId, userId, { lock: true });
    if (!grant) {
      [grant] = await tx
        .insert(oauthGrants)
        .values({ id: newId("grt"), clientId: request.client.clientId, userId, scopes: request.scopes })
        .onConflictDoNothing()
        .returning();
      grant ??= await activeGrant(tx, request.client.clientId, userId, { lock: true });
    }
    if (request.scopes.some((s) => !grant!.scopes.includes(s))) {
      const scopes = SCOPE_NAMES.filter((s) => grant!.scopes.includes(s) || request.scopes.includes(s));
      // The database's clock, as events' occurred_at is: fan-out compares the two (lib/webhooks/entitlement.ts).
      await tx.update(oauthGrants).set({ scopes, updatedAt: sql`now()` }).where(eq(oauthGrants.id, grant!.id));
    }
    await tx.insert(oauthCodes).values({
      codeHash: sha256Hex(code),
      clientId: request.client.clientId,
      grantId: grant!.id,
      redirectUri: request.redirectUri,
      scopes: request.scopes,
      codeChallenge: request.codeChallenge,
      resource: request.resource,
      expiresAt: new Date(Date.now() + CODE_TTL_S * 1000),
    });
  });
  return redirectBack(request.redirectUri, { code, state: request.state });
}
