import { beforeAll, describe, expect, it } from "vitest";
import { inWriteCtx } from "../http/operation";
import * as oauth from "oauth4webapi";
import { and, eq, isNull } from "drizzle-orm";
import { sha256Hex } from "../crypto/random";
import type { Db } from "../db/client";
import { oauthCodes, oauthGrants } from "../db/schema";
import { seedDemoWorld } from "../db/seed";
import { registerApp } from "../oauth-clients/register-app";
import { setupApi } from "../testing/fixtures";
import { authorizationStep, decideAuthorization, prepareAuthorization, type AuthorizationPageStep, type AuthorizationStep } from "./authorize";
import { checkRedirectUri, readAuthorizeParams, redirectDestination, UnsafeToRedirect } from "./authorize-checks";
import type { OAuthClient } from "./client-auth";

// The athlete's side of GET /oauth/authorize, driven as the consent page drives it:
// authorizationStep (prepareAuthorization once the athlete is signed in) with the query of the
// URL the app built, decideAuthorization with the form the athlete submits. What comes back to
// the app is checked with oauth4webapi.

const api = setupApi();
const insecure = { [oauth.allowInsecureRequests]: true } as const;
let db: Db;
let as: oauth.AuthorizationServer;

const trainingLog = { client_id: "demo-training-log", redirectUri: "http://127.0.0.1:8976/callback" };
// A native app listens on whatever port it got (RFC 8252 §7.3).
const mobile = { client_id: "demo-mobile", redirectUri: "http://127.0.0.1:50123/callback" };
type App = typeof trainingLog;

beforeAll(async () => {
  db = await api.db();
  await seedDemoWorld(db, { baseUrl: api.url });
  const issuer = new URL(api.url);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: "oauth2" }));
});

/** The query of the link an app builds, as a record of its parameters. */
async function request(app: App, over: Record<string, string | undefined> = {}) {
  const verifier = oauth.generateRandomCodeVerifier();
  const params: Record<string, string | undefined> = {
    client_id: app.client_id,
    redirect_uri: app.redirectUri,
    response_type: "code",
    scope: "athlete.read activities.read",
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state: oauth.generateRandomState(),
    resource: `${api.url}/v1`,
    ...over,
  };
  for (const k of Object.keys(params)) if (params[k] === undefined) delete params[k];
  return params;
}

function redirectUrl(step: AuthorizationPageStep): URL {
  expect(step.kind).toBe("redirect");
  return new URL((step as { url: string }).url);
}

/** An error redirected to the app: oauth4webapi verifies `iss` and `state` before it reports it. */
function redirectedError(step: AuthorizationPageStep, app: App, state: string | undefined): oauth.AuthorizationResponseError {
  const url = redirectUrl(step);
  expect(`${url.origin}${url.pathname}`).toBe(app.redirectUri);
  expect(url.searchParams.has("code")).toBe(false);
  let caught: unknown;
  try {
    oauth.validateAuthResponse(as, { client_id: app.client_id }, url, state);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(oauth.AuthorizationResponseError);
  return caught as oauth.AuthorizationResponseError;
}

/**
 * An error shown with a link back to the app, not redirected: the link carries what a redirect
 * would have (oauth4webapi verifies `iss` and `state` before it reports it).
 */
function returnedError(step: AuthorizationStep, app: App, state: string | undefined): oauth.AuthorizationResponseError {
  expect(step.kind).toBe("error_return");
  const shown = step as Extract<AuthorizationStep, { kind: "error_return" }>;
  expect(shown.returnHost).toBe(new URL(app.redirectUri).host);
  expect(shown.message).toBeTruthy();
  return redirectedError({ kind: "redirect", url: shown.returnUrl }, app, state);
}

/** An athlete who has already authorized `app` (and so trusts it and its redirect URIs). */
async function athleteWhoTrusts(...apps: App[]) {
  const person = await api.person();
  for (const app of apps) redirectUrl(await decideAuthorization(db, await request(app, { scope: "athlete.read" }), person.id, "allow"));
  return person;
}

async function activeGrant(clientId: string, userId: string) {
  const [grant] = await db
    .select()
    .from(oauthGrants)
    .where(and(eq(oauthGrants.clientId, clientId), eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt)));
  return grant;
}

describe("errors shown on a page, never redirected", () => {
  it("an unknown client_id is an error page (RFC 6749 §4.1.2.1)", async () => {
    const person = await api.person();
    // A NUL (which PostgreSQL refuses) or a lone surrogate in the id is just an unknown client too.
    const odd = [await request({ ...trainingLog, client_id: "a\u0000b" }), await request({ ...trainingLog, client_id: "a\ud800" })];
    for (const params of [await request({ ...trainingLog, client_id: "no-such-app" }), await request(trainingLog, { client_id: undefined }), ...odd]) {
      const step = await prepareAuthorization(db, params, [], person.id);
      expect(step.kind).toBe("error_page");
      expect(await decideAuthorization(db, params, person.id, "allow")).toMatchObject({ kind: "error_page" });
    }
  });

  it("an unregistered, missing or inexactly matching redirect_uri is an error page (RFC 6749 §3.1.2.3, RFC 9700 §4.1.3)", async () => {
    const person = await api.person();
    for (const redirect_uri of [
      "https://attacker.example/callback",
      "http://127.0.0.1:8976/callback/",
      "http://127.0.0.1:8976/callback?next=x",
      "http://127.0.0.1:8976/Callback",
      `${api.url}/demo/callback/../callback`,
      "not a url",
      undefined,
    ]) {
      const params = await request(trainingLog, { redirect_uri });
      expect(await prepareAuthorization(db, params, [], person.id), String(redirect_uri)).toMatchObject({ kind: "error_page" });
      // The consent form is input too: the decision re-checks it.
      expect(await decideAuthorization(db, params, person.id, "allow"), String(redirect_uri)).toMatchObject({ kind: "error_page" });
    }
    expect(await activeGrant(trainingLog.client_id, person.id)).toBeUndefined();
  });

  it("a confidential client's loopback URI on another port is an error page: the port exception is for native apps (RFC 8252 §7.3, CONTRACT §6)", async () => {
    const person = await api.person();
    const step = await prepareAuthorization(db, await request(trainingLog, { redirect_uri: "http://127.0.0.1:9999/callback" }), [], person.id);
    expect(step.kind).toBe("error_page");
  });

  it("a public client's loopback URI may use any port, but not another host or path (RFC 8252 §7.3)", async () => {
    const person = await api.person();
    for (const port of [1024, 50123, 65535]) {
      const step = await prepareAuthorization(db, await request({ ...mobile, redirectUri: `http://127.0.0.1:${port}/callback` }), [], person.id);
      expect(step.kind, String(port)).toBe("consent");
    }
    for (const redirect_uri of ["http://127.0.0.1:50123/other", "http://localhost:50123/callback", "https://127.0.0.1:50123/callback", "http://127.0.0.1:50123/callback#x"]) {
      const step = await prepareAuthorization(db, await request(mobile, { redirect_uri }), [], person.id);
      expect(step.kind, redirect_uri).toBe("error_page");
    }
  });

  it("a repeated client_id or redirect_uri is an error page, since which one to trust is unknown (RFC 6749 §3.1)", async () => {
    const person = await api.person();
    for (const name of ["client_id", "redirect_uri"]) {
      expect(await prepareAuthorization(db, await request(trainingLog), [name], person.id)).toMatchObject({ kind: "error_page", message: expect.stringMatching(`${name} was sent more than once`) });
    }
    // A link without any client_id says so, rather than naming an app that is not registered.
    expect(await prepareAuthorization(db, await request(trainingLog, { client_id: undefined }), [], person.id)).toMatchObject({ kind: "error_page", message: expect.stringMatching(/has no client_id/) });
  });

  it("other errors in the same request do not make an unsafe request redirect", async () => {
    const person = await api.person();
    const params = await request(trainingLog, { redirect_uri: "https://attacker.example/cb", response_type: "token", code_challenge: undefined });
    expect(await prepareAuthorization(db, params, [], person.id)).toMatchObject({ kind: "error_page" });
  });
});

describe("before sign-in: nothing goes back to the app (RFC 9700 §4.11.2)", () => {
  it("an unverified client or redirect URI is shown to a visitor not signed in, as to anyone", async () => {
    for (const params of [await request({ ...trainingLog, client_id: "no-such-app" }), await request(trainingLog, { redirect_uri: "https://attacker.example/cb" })]) {
      expect(await authorizationStep(db, params, [], null)).toMatchObject({ kind: "error_page" });
    }
    expect(await authorizationStep(db, await request(trainingLog), ["client_id"], null)).toMatchObject({ kind: "error_page" });
  });

  it("any other request, an invalid one included, sends the visitor to sign in first, not back to the app", async () => {
    for (const over of [{}, { scope: "admin" }, { response_type: "token" }, { code_challenge: undefined }]) {
      expect(await authorizationStep(db, await request(trainingLog, over), [], null), JSON.stringify(over)).toEqual({ kind: "sign_in" });
    }
  });

  it("once signed in, the step is the athlete's: an error is redirected only to an app they trust", async () => {
    const params = await request(trainingLog, { scope: "athlete.read admin" });
    const trusting = await athleteWhoTrusts(trainingLog);
    expect(redirectedError(await authorizationStep(db, params, [], trusting.id), trainingLog, params.state).error).toBe("invalid_scope");
    const stranger = await api.person();
    expect((await authorizationStep(db, params, [], stranger.id)).kind).toBe("error_return");
    expect((await authorizationStep(db, await request(trainingLog), [], stranger.id)).kind).toBe("consent");
  });
});

describe("errors an athlete never trusted the app with: shown, with a link back (RFC 9700 §4.11.2)", () => {
  it("an app anyone registered, sending an invalid request, is not redirected to: the service is no open redirector", async () => {
    const developer = await api.person();
    const { app } = await inWriteCtx({ db, actor: { kind: "session", userId: developer.id } }, (ctx) => registerApp({ ctx, input: { name: "Free Prizes", kind: "confidential", redirect_uris: ["https://phish.example/landing"] } }));
    const phish = { client_id: app.client_id, redirectUri: "https://phish.example/landing" };
    const person = await api.person();
    for (const over of [{ scope: "admin" }, { response_type: "token" }, { code_challenge: undefined }, { resource: "https://elsewhere.example/v1" }]) {
      const params = await request(phish, over);
      const shown = await prepareAuthorization(db, params, [], person.id);
      expect(shown.kind, JSON.stringify(over)).toBe("error_return");
      expect(shown).toMatchObject({ appName: "Free Prizes", returnHost: "phish.example" });
      // The consent form is input too: a forged post is not redirected either.
      expect((await decideAuthorization(db, params, person.id, "allow")).kind).toBe("error_return");
      expect((await decideAuthorization(db, params, person.id, "deny")).kind).toBe("error_return");
    }
    expect(await activeGrant(app.client_id, person.id)).toBeUndefined();
  });

  it("the link back carries the error, state and iss the app expects (RFC 6749 §4.1.2.1, RFC 9207 §2)", async () => {
    const person = await api.person();
    for (const app of [trainingLog, mobile]) {
      const params = await request(app, { scope: "athlete.read admin" });
      const err = returnedError(await prepareAuthorization(db, params, [], person.id), app, params.state);
      expect(err.error).toBe("invalid_scope");
      expect(err.cause.get("iss")).toBe(api.url);
    }
  });
});

describe("errors redirected to an app the athlete has authorized, with state and iss (RFC 6749 §4.1.2.1, RFC 9207 §2)", () => {
  const cases: [string, Record<string, string | undefined>, string][] = [
    ["response_type=token is unsupported_response_type (RFC 6749 §4.1.1, OAuth 2.1 drops the implicit grant)", { response_type: "token" }, "unsupported_response_type"],
    ["a missing response_type is invalid_request (RFC 6749 §4.1.2.1: a required parameter is missing)", { response_type: undefined }, "invalid_request"],
    ["a missing code_challenge is invalid_request: PKCE is required (RFC 7636 §4.4.1, OAuth 2.1 §4.1.1)", { code_challenge: undefined }, "invalid_request"],
    ["code_challenge_method=plain is invalid_request (RFC 9700 §2.1.1)", { code_challenge_method: "plain" }, "invalid_request"],
    ["a missing code_challenge_method means plain and is invalid_request (RFC 7636 §4.3)", { code_challenge_method: undefined }, "invalid_request"],
    ["a malformed code_challenge is invalid_request (RFC 7636 §4.2)", { code_challenge: "too-short" }, "invalid_request"],
    ["an unknown scope is invalid_scope (RFC 6749 §3.3)", { scope: "athlete.read admin" }, "invalid_scope"],
    ["an empty scope is invalid_scope (RFC 6749 §3.3)", { scope: "" }, "invalid_scope"],
    ["a resource other than {base_url}/v1 is invalid_target (RFC 8707 §2)", { resource: "https://elsewhere.example/v1" }, "invalid_target"],
  ];
  for (const [name, over, error] of cases) {
    it(name, async () => {
      const stranger = await api.person();
      const person = await athleteWhoTrusts(trainingLog, mobile);
      for (const app of [trainingLog, mobile]) {
        const params = await request(app, over);
        const err = redirectedError(await prepareAuthorization(db, params, [], person.id), app, params.state);
        expect(err.error).toBe(error);
        expect(err.error_description).toBeTruthy();
        expect(err.cause.get("iss")).toBe(api.url);
        // The same request for an athlete who never authorized the app is shown, not redirected.
        expect(returnedError(await prepareAuthorization(db, params, [], stranger.id), app, params.state).error).toBe(error);
      }
      expect(await activeGrant(trainingLog.client_id, stranger.id)).toBeUndefined();
    });
  }

  it("a resource of {base_url}/v1 with a trailing slash is invalid_target: resources match exactly (RFC 8707 §2)", async () => {
    const person = await athleteWhoTrusts(trainingLog);
    const params = await request(trainingLog, { resource: `${api.url}/v1/` });
    expect(redirectedError(await prepareAuthorization(db, params, [], person.id), trainingLog, params.state).error).toBe("invalid_target");
  });

  it("a write scope for the MCP server is invalid_scope: its tools only read, and a consent for it must not widen the app's /v1 grant (CONTRACT §12)", async () => {
    const person = await athleteWhoTrusts(trainingLog);
    for (const scope of ["activities.write", "athlete.read metrics.write"]) {
      const params = await request(trainingLog, { scope, resource: `${api.url}/mcp` });
      const err = redirectedError(await prepareAuthorization(db, params, [], person.id), trainingLog, params.state);
      expect(err.error, scope).toBe("invalid_scope");
      expect(err.error_description, scope).toMatch(/only read/);
    }
    const reads = await request(trainingLog, { scope: "activities.read location.read", resource: `${api.url}/mcp` });
    expect((await prepareAuthorization(db, reads, [], person.id)).kind).not.toMatch(/error/);
  });

  it("a repeated parameter is invalid_request (RFC 6749 §3.1)", async () => {
    const person = await athleteWhoTrusts(trainingLog);
    const params = await request(trainingLog);
    const err = redirectedError(await prepareAuthorization(db, params, ["scope"], person.id), trainingLog, params.state);
    expect(err.error).toBe("invalid_request");
  });

  it("`resource` named twice is that one resource; two different ones are invalid_target (RFC 8707 §2)", async () => {
    const person = await athleteWhoTrusts(trainingLog);
    const v1 = `${api.url}/v1`;
    const same = readAuthorizeParams({ ...(await request(trainingLog)), resource: [v1, v1] });
    expect(same.repeated).toEqual([]);
    expect((await prepareAuthorization(db, same.params, same.repeated, person.id)).kind).not.toMatch(/error/);
    const two = readAuthorizeParams({ ...(await request(trainingLog)), resource: [v1, `${api.url}/mcp`] });
    expect(redirectedError(await prepareAuthorization(db, two.params, two.repeated, person.id), trainingLog, two.params.state).error).toBe("invalid_target");
  });

  it("an error without state carries none back, and still carries iss", async () => {
    const person = await athleteWhoTrusts(trainingLog);
    const params = await request(trainingLog, { state: undefined, response_type: "token" });
    const url = redirectUrl(await prepareAuthorization(db, params, [], person.id));
    expect(url.searchParams.has("state")).toBe(false);
    expect(url.searchParams.get("iss")).toBe(api.url);
    expect(() => oauth.validateAuthResponse(as, { client_id: trainingLog.client_id }, url, oauth.expectNoState)).toThrow(oauth.AuthorizationResponseError);
  });

  it("Deny on the consent screen, which named where it goes, sends access_denied with state and iss, and grants nothing (RFC 6749 §4.1.2.1)", async () => {
    const person = await api.person();
    for (const app of [trainingLog, mobile]) {
      const params = await request(app);
      const err = redirectedError(await decideAuthorization(db, params, person.id, "deny"), app, params.state);
      expect(err.error).toBe("access_denied");
      expect(await activeGrant(app.client_id, person.id)).toBeUndefined();
    }
  });
});

describe("consent", () => {
  it("asks a first-time athlete for every scope requested, naming the app", async () => {
    const person = await api.person();
    const step = await prepareAuthorization(db, await request(trainingLog, { scope: "activities.read athlete.read" }), [], person.id);
    expect(step).toMatchObject({
      kind: "consent",
      request: { client: { clientId: "demo-training-log", name: "Demo Training Log" }, redirectUri: trainingLog.redirectUri },
      newScopes: ["activities.read", "athlete.read"],
      grantedScopes: [],
    });
  });

  it("Allow redirects with code, state and iss to the exact redirect URI (RFC 6749 §4.1.2, RFC 9207 §2)", async () => {
    const person = await api.person();
    for (const app of [trainingLog, mobile]) {
      const params = await request(app);
      const url = redirectUrl(await decideAuthorization(db, params, person.id, "allow"));
      expect(`${url.origin}${url.pathname}`).toBe(app.redirectUri);
      const callback = oauth.validateAuthResponse(as, { client_id: app.client_id }, url, params.state);
      expect(callback.get("code")).toMatch(/^[0-9A-Za-z]{43}$/);
      expect(callback.get("iss")).toBe(api.url);
    }
  });

  it("asks a confidential app's athlete again even for scopes already granted (CONTRACT §9: the consent screen, with Allow and Deny, after sign-in); Deny then leaves the grant as it was", async () => {
    const person = await api.person();
    await decideAuthorization(db, await request(trainingLog), person.id, "allow");
    for (const scope of ["athlete.read activities.read", "activities.read", "athlete.read"]) {
      const step = await prepareAuthorization(db, await request(trainingLog, { scope }), [], person.id);
      expect(step, scope).toMatchObject({ kind: "consent", newScopes: [] });
      expect(step.kind === "consent" && [...step.askedScopes].sort(), scope).toEqual(scope.split(" ").sort());
    }
    const params = await request(trainingLog, { scope: "athlete.read" });
    const denied = redirectUrl(await decideAuthorization(db, params, person.id, "deny"));
    expect(denied.searchParams.get("error")).toBe("access_denied");
    expect([...(await activeGrant(trainingLog.client_id, person.id))!.scopes].sort()).toEqual(["activities.read", "athlete.read"]);
    const allowed = redirectUrl(await decideAuthorization(db, params, person.id, "allow"));
    expect(oauth.validateAuthResponse(as, { client_id: trainingLog.client_id }, allowed, params.state).get("code")).toBeTruthy();
  });

  it("asks a public client again even for scopes already granted: its identity cannot be assured (RFC 8252 §8.6)", async () => {
    const person = await api.person();
    await decideAuthorization(db, await request(mobile), person.id, "allow");
    const step = await prepareAuthorization(db, await request(mobile), [], person.id);
    expect(step).toMatchObject({ kind: "consent", newScopes: [] });
    expect(step.kind === "consent" && step.grantedScopes.length).toBeGreaterThan(0);
  });

  it("asking again for part of a grant, the consent step names that part: what the code will carry, not the whole grant", async () => {
    const person = await api.person();
    await decideAuthorization(db, await request(mobile, { scope: "athlete.read activities.read activities.write" }), person.id, "allow");
    const step = await prepareAuthorization(db, await request(mobile, { scope: "athlete.read" }), [], person.id);
    expect(step).toMatchObject({
      kind: "consent",
      askedScopes: ["athlete.read"],
      newScopes: [],
      grantedScopes: ["athlete.read", "activities.read", "activities.write"],
    });
  });

  it("asks only for the scopes not yet granted, and after approval the grant holds the union", async () => {
    const person = await api.person();
    await decideAuthorization(db, await request(trainingLog, { scope: "athlete.read activities.read" }), person.id, "allow");
    const before = await activeGrant(trainingLog.client_id, person.id);

    const params = await request(trainingLog, { scope: "athlete.read metrics.read teams.read" });
    const step = await prepareAuthorization(db, params, [], person.id);
    expect(step).toMatchObject({ kind: "consent", newScopes: ["metrics.read", "teams.read"], grantedScopes: ["athlete.read", "activities.read"] });

    const url = redirectUrl(await decideAuthorization(db, params, person.id, "allow"));
    const code = oauth.validateAuthResponse(as, { client_id: trainingLog.client_id }, url, params.state).get("code")!;
    const after = await activeGrant(trainingLog.client_id, person.id);
    expect(after!.id).toBe(before!.id);
    expect([...after!.scopes].sort()).toEqual(["activities.read", "athlete.read", "metrics.read", "teams.read"]);
    // The code carries what this request asked for, no more.
    const [row] = await db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, sha256Hex(code)));
    expect([...row!.scopes].sort()).toEqual(["athlete.read", "metrics.read", "teams.read"]);

    // Now nothing new is asked: the screen says so.
    const again = await prepareAuthorization(db, await request(trainingLog, { scope: "metrics.read activities.read" }), [], person.id);
    expect(again).toMatchObject({ kind: "consent", newScopes: [] });
  });

  it("two approvals at once leave the grant holding both, whether or not one existed before", async () => {
    for (let round = 0; round < 5; round++) {
      const fresh = await api.person();
      await Promise.all([
        decideAuthorization(db, await request(trainingLog, { scope: "metrics.read" }), fresh.id, "allow"),
        decideAuthorization(db, await request(trainingLog, { scope: "teams.read" }), fresh.id, "allow"),
      ]);
      expect([...(await activeGrant(trainingLog.client_id, fresh.id))!.scopes].sort()).toEqual(["metrics.read", "teams.read"]);

      const returning = await api.person();
      await decideAuthorization(db, await request(trainingLog, { scope: "athlete.read" }), returning.id, "allow");
      await Promise.all([
        decideAuthorization(db, await request(trainingLog, { scope: "athlete.read metrics.read" }), returning.id, "allow"),
        decideAuthorization(db, await request(trainingLog, { scope: "teams.read" }), returning.id, "allow"),
      ]);
      expect([...(await activeGrant(trainingLog.client_id, returning.id))!.scopes].sort()).toEqual(["athlete.read", "metrics.read", "teams.read"]);
    }
  });

  it("a grant is per athlete and per app: another athlete, or another app, is asked", async () => {
    const person = await api.person();
    const other = await api.person();
    await decideAuthorization(db, await request(trainingLog), person.id, "allow");
    expect((await prepareAuthorization(db, await request(trainingLog), [], other.id)).kind).toBe("consent");
    expect((await prepareAuthorization(db, await request(mobile), [], person.id)).kind).toBe("consent");
  });

  it("Deny after an earlier Allow leaves the earlier grant as it was", async () => {
    const person = await api.person();
    await decideAuthorization(db, await request(trainingLog, { scope: "athlete.read" }), person.id, "allow");
    const params = await request(trainingLog, { scope: "athlete.read metrics.read" });
    expect(redirectedError(await decideAuthorization(db, params, person.id, "deny"), trainingLog, params.state).error).toBe("access_denied");
    expect((await activeGrant(trainingLog.client_id, person.id))!.scopes).toEqual(["athlete.read"]);
  });
});

describe("readAuthorizeParams", () => {
  it("keeps the first value of each parameter, names the repeated ones, and rebuilds the query with every value (a repeat is refused after sign-in too)", () => {
    const read = readAuthorizeParams({ client_id: "app", scope: ["a", "b"], state: undefined, redirect_uri: "http://127.0.0.1:1/cb" });
    expect(read.params).toEqual({ client_id: "app", scope: "a", redirect_uri: "http://127.0.0.1:1/cb" });
    expect(read.repeated).toEqual(["scope"]);
    expect(read.query.toString()).toBe("client_id=app&scope=a&scope=b&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb");
  });

  it("takes a parameter sent without a value as omitted (RFC 6749 §3.1)", () => {
    const read = readAuthorizeParams({ client_id: "app", resource: "", state: "", scope: ["", "a"] });
    expect(read.params).toEqual({ client_id: "app", scope: "a" });
    expect(read.repeated).toEqual([]);
    expect(read.query.toString()).toBe("client_id=app&scope=a");
  });
});

describe("checkRedirectUri for a loopback redirect on any port (RFC 8252 §7.3)", () => {
  const client = { clientId: "native", kind: "public", registration: "console", redirectUris: ["http://127.0.0.1/callback"] } as unknown as OAuthClient;

  it("takes the registered URI with another port, as a string exactly", () => {
    expect(checkRedirectUri(client, "http://127.0.0.1:5555/callback")).toBe("http://127.0.0.1:5555/callback");
    expect(checkRedirectUri(client, "http://127.0.0.1/callback")).toBe("http://127.0.0.1/callback");
    // Port 80 written out, which a URL parser drops: still a port, still the redirect_uri as sent.
    expect(checkRedirectUri(client, "http://127.0.0.1:80/callback")).toBe("http://127.0.0.1:80/callback");
    const v6 = { ...client, redirectUris: ["http://[::1]:8976/callback"] } as OAuthClient;
    expect(checkRedirectUri(v6, "http://[::1]:80/callback")).toBe("http://[::1]:80/callback");
    for (const uri of ["http://127.0.0.1:80/other", "http://127.0.0.1:080/callback", "http://127.0.0.1:80/callback?x=1"]) {
      expect(() => checkRedirectUri(client, uri), uri).toThrow(UnsafeToRedirect);
    }
  });

  it("refuses what a URL parser would make equal: a trailing NUL or space, userinfo, dot segments, another case", () => {
    for (const uri of [
      "http://127.0.0.1:5555/callback\u0000",
      "http://127.0.0.1:5555/callback ",
      "http://evil@127.0.0.1:5555/callback",
      "http://127.0.0.1:5555/a/../callback",
      "HTTP://127.0.0.1:5555/callback",
      "http://127.0.0.1:5555/callback#x",
      "http://127.0.0.1:5555/callback?x=1",
    ]) {
      expect(() => checkRedirectUri(client, uri), JSON.stringify(uri)).toThrow(UnsafeToRedirect);
    }
  });

  it("names a private-use scheme's destination by its scheme, which has no host (RFC 8252 §7.1)", () => {
    expect(redirectDestination("com.example.native:/oauth/cb")).toBe("com.example.native");
    expect(redirectDestination("https://app.example/cb")).toBe("app.example");
    expect(redirectDestination("http://127.0.0.1:5555/callback")).toBe("127.0.0.1:5555");
  });
});
