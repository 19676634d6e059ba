import { beforeAll, describe, expect, it } from "vitest";
import * as oauth from "oauth4webapi";
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK, type JWTPayload } from "jose";
import { and, eq, inArray, is, isNull, sql } from "drizzle-orm";
import { PgTable } from "drizzle-orm/pg-core";
import { SCOPE_NAMES } from "../auth/scopes";
import { sha256Hex } from "../crypto/random";
import type { Db } from "../db/client";
import * as schema from "../db/schema";
import { oauthCodes, oauthGrants, oauthRefreshTokens, signingKeys, users } from "../db/schema";
import { DEMO_CONFIDENTIAL_SECRET, seedDemoWorld } from "../db/seed";
import { OPERATIONS } from "../openapi/operations";
import { deleteApp } from "../oauth-clients/delete-app";
import { registerApp } from "../oauth-clients/register-app";
import { rotateClientSecret } from "../oauth-clients/rotate-client-secret";
import { disconnectApp } from "../oauth-grants/disconnect-app";
import { setupApi } from "../testing/fixtures";
import { isWellFormedToken } from "../tokens/format";
import { decideAuthorization, prepareAuthorization } from "./authorize";
import { privateJwkOf } from "./keys";
import { inWriteCtx } from "../http/operation";

// The authorization server driven by a strict, independent client (panva's oauth4webapi)
// over real HTTP. The athlete's side of /oauth/authorize is what the consent page does:
// decideAuthorization with the query of the URL the client built.

const api = setupApi();
const insecure = { [oauth.allowInsecureRequests]: true } as const;
let db: Db;
let as: oauth.AuthorizationServer;
const demo = {} as Record<"ava" | "ben" | "cora" | "dan" | "eve" | "dev", string>;

type App = { client: oauth.Client; auth: () => oauth.ClientAuth; redirectUri: string };
const trainingLog: App = {
  client: { client_id: "demo-training-log" },
  auth: () => oauth.ClientSecretBasic(DEMO_CONFIDENTIAL_SECRET),
  redirectUri: "http://127.0.0.1:8976/callback",
};
// A native app's loopback redirect on whatever port it got (RFC 8252 §7.3).
const mobile: App = { client: { client_id: "demo-mobile" }, auth: () => oauth.None(), redirectUri: "http://127.0.0.1:61234/callback" };

beforeAll(async () => {
  db = await api.db();
  await seedDemoWorld(db, { baseUrl: api.url });
  for (const u of await db.select({ id: users.id, email: users.email }).from(users)) {
    demo[u.email.split("@")[0] as keyof typeof demo] = u.id;
  }
  const issuer = new URL(api.url);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...insecure, algorithm: "oauth2" }));
});

type Authorized = { callback: URLSearchParams; verifier: string; state: string };

/** The client builds the authorization URL; the athlete presses Allow; the client validates the callback. */
async function approve(app: App, userId: string, opts: { scope?: string; extra?: Record<string, string> } = {}): Promise<Authorized> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: app.client.client_id,
    redirect_uri: app.redirectUri,
    response_type: "code",
    scope: opts.scope ?? "athlete.read activities.read",
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    resource: `${api.url}/v1`,
    ...opts.extra,
  }).toString();
  const step = await decideAuthorization(db, Object.fromEntries(url.searchParams), userId, "allow");
  expect(step.kind).toBe("redirect");
  const callback = oauth.validateAuthResponse(as, app.client, new URL((step as { url: string }).url), state);
  return { callback, verifier, state };
}

function exchangeRequest(app: App, a: Authorized, over: { redirectUri?: string; verifier?: string; extra?: Record<string, string> } = {}) {
  return oauth.authorizationCodeGrantRequest(as, app.client, app.auth(), a.callback, over.redirectUri ?? app.redirectUri, over.verifier ?? a.verifier, {
    ...insecure,
    additionalParameters: over.extra,
  });
}

async function exchange(app: App, a: Authorized, over: Parameters<typeof exchangeRequest>[2] = {}) {
  return oauth.processAuthorizationCodeResponse(as, app.client, await exchangeRequest(app, a, over));
}

/** Authorize and exchange: what an app holds after a successful flow. */
async function connect(app: App, userId: string, scope?: string) {
  return exchange(app, await approve(app, userId, { scope }));
}

async function refresh(app: App, refreshToken: string, scope?: string) {
  const res = await oauth.refreshTokenGrantRequest(as, app.client, app.auth(), refreshToken, {
    ...insecure,
    additionalParameters: scope === undefined ? undefined : { scope },
  });
  return oauth.processRefreshTokenResponse(as, app.client, res);
}

async function clientCredentials(app: App, params: Record<string, string> = {}) {
  const res = await oauth.clientCredentialsGrantRequest(as, app.client, app.auth(), params, insecure);
  return oauth.processClientCredentialsResponse(as, app.client, res);
}

async function revoke(app: App, token: string) {
  return oauth.processRevocationResponse(await oauth.revocationRequest(as, app.client, app.auth(), token, insecure));
}

/** The OAuth error response a refused call ended in, however oauth4webapi reported it. */
async function failure(p: Promise<unknown>): Promise<{ status: number; error: string; description: unknown; wwwAuthenticate: string | null }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err instanceof oauth.ResponseBodyError) {
    return { status: err.status, error: err.error, description: err.error_description, wwwAuthenticate: err.response.headers.get("www-authenticate") };
  }
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    const body = (await err.response.json()) as { error: string; error_description?: string };
    return { status: err.status, error: body.error, description: body.error_description, wwwAuthenticate: err.response.headers.get("www-authenticate") };
  }
  throw new Error(`expected an OAuth error response, got ${err instanceof Error ? err.stack : String(err)}`);
}

/** POST to an OAuth endpoint without a client library, for what a library would never send. */
function post(path: "/oauth/token" | "/oauth/revoke", body: string | Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(api.url + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: typeof body === "string" ? body : new URLSearchParams(body).toString(),
  });
}

function basic(id: string, secret: string) {
  // RFC 6749 §2.3.1: each part form-urlencoded, then base64.
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
}

/** An RFC 6749 §5.2 error response: its status, JSON with error and error_description, never cached. */
async function expectOAuthError(res: Response, status: number, error: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("cache-control")).toContain("no-store");
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ error });
  expect(typeof body.error_description).toBe("string");
  expect(body).not.toHaveProperty("code"); // not a problem document
  return res;
}

async function expectProblem(res: Response, status: number, code: string) {
  const body = (await res.json()) as { code?: string };
  expect({ status: res.status, code: body.code }).toEqual({ status, code });
  return res;
}

async function grantOf(clientId: string, userId: string) {
  const [grant] = await db
    .select()
    .from(oauthGrants)
    .where(and(eq(oauthGrants.clientId, clientId), eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt)));
  return grant;
}

const session = (userId: string) => ({ db, actor: { kind: "session" as const, userId } });

describe("discovery", () => {
  it("serves RFC 8414 §2 authorization server metadata, public and cacheable, that oauth4webapi accepts (RFC 8414 §3)", async () => {
    const res = await fetch(`${api.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toMatch(/\bpublic\b.*max-age=\d+/);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(as).toEqual(await res.json());
    expect(as).toMatchObject({
      issuer: api.url,
      authorization_endpoint: `${api.url}/oauth/authorize`,
      token_endpoint: `${api.url}/oauth/token`,
      revocation_endpoint: `${api.url}/oauth/revoke`,
      jwks_uri: `${api.url}/oauth/jwks`,
      scopes_supported: SCOPE_NAMES,
      response_types_supported: ["code"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "none"],
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${api.url}/docs`,
    });
    expect([...as.grant_types_supported!].sort()).toEqual(["authorization_code", "client_credentials", "refresh_token"]);
    expect((await fetch(as.service_documentation!)).status).toBe(200);
  });

  it("serves RFC 9728 §3 protected resource metadata for {base_url}/v1, public and cacheable", async () => {
    const resource = new URL(`${api.url}/v1`);
    const res = await oauth.resourceDiscoveryRequest(resource, insecure);
    expect(res.headers.get("cache-control")).toMatch(/\bpublic\b.*max-age=\d+/);
    const rs = await oauth.processResourceDiscoveryResponse(resource, res);
    expect(rs).toMatchObject({
      resource: `${api.url}/v1`,
      authorization_servers: [api.url],
      scopes_supported: SCOPE_NAMES,
      bearer_methods_supported: ["header"],
      resource_documentation: `${api.url}/docs`,
    });
  });

  it("points a 401 from /v1 at the resource metadata (RFC 9728 §5.1)", async () => {
    const res = await api.call(null, "GET", "/v1/athletes/me");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${api.url}/.well-known/oauth-protected-resource/v1"`);
  });

  it("publishes the verification keys at jwks_uri with a kid, public parts only (RFC 7517 §5)", async () => {
    const res = await fetch(as.jwks_uri!);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toMatch(/\bpublic\b/);
    const { keys } = (await res.json()) as { keys: JWK[] };
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      expect(k).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
      expect(k.kid).toBeTruthy();
      expect(k).not.toHaveProperty("d");
    }
  });
});

describe("authorization code flow with PKCE", () => {
  it("works for the confidential demo app with HTTP Basic (RFC 6749 §4.1, §2.3.1; RFC 7636 §4.5)", async () => {
    const person = await api.person();
    const authorized = await approve(trainingLog, person.id);
    const res = await exchangeRequest(trainingLog, authorized);
    // RFC 6749 §5.1: token responses are never cached.
    expect(res.headers.get("cache-control")).toContain("no-store");
    const tokens = await oauth.processAuthorizationCodeResponse(as, trainingLog.client, res);
    expect(tokens).toMatchObject({ token_type: "bearer", expires_in: 3600, scope: "athlete.read activities.read" });
    expect(isWellFormedToken(tokens.refresh_token!, "refresh")).toBe(true);

    const me = await api.call(tokens.access_token, "GET", "/v1/athletes/me");
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ id: person.id, email: person.email });
  });

  it("works for the public demo app with no client authentication and a loopback redirect on any port (RFC 8252 §7.3, §8.1)", async () => {
    const person = await api.person();
    for (const port of [61234, 1025]) {
      const app = { ...mobile, redirectUri: `http://127.0.0.1:${port}/callback` };
      const tokens = await connect(app, person.id, "athlete.read");
      expect(tokens).toMatchObject({ token_type: "bearer", scope: "athlete.read" });
      expect((await api.call(tokens.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
      // A public client refreshes with its client_id alone.
      const next = await refresh(app, tokens.refresh_token!);
      expect((await api.call(next.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    }
  });

  it("takes parameters sent without a value as omitted (RFC 6749 §3.1): a public client's empty client_secret, an empty resource", async () => {
    const person = await api.person();
    const a = await approve(mobile, person.id);
    const tokens = await exchange(mobile, a, { extra: { client_secret: "", resource: "" } });
    expect(decodeJwt(tokens.access_token).aud).toBe(`${api.url}/v1`);
    expect((await api.call(tokens.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
  });

  it("binds the token to {base_url}/v1 when the client sends no resource (CONTRACT §6)", async () => {
    const person = await api.person();
    const authorized = await approve(trainingLog, person.id);
    const tokens = await exchange(trainingLog, authorized);
    expect(decodeJwt(tokens.access_token).aud).toBe(`${api.url}/v1`);

    const verifier = oauth.generateRandomCodeVerifier();
    const step = await decideAuthorization(
      db,
      {
        client_id: "demo-training-log",
        redirect_uri: trainingLog.redirectUri,
        response_type: "code",
        scope: "athlete.read",
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
      },
      person.id,
      "allow",
    );
    const callback = oauth.validateAuthResponse(as, trainingLog.client, new URL((step as { url: string }).url), oauth.expectNoState);
    const plain = await exchange(trainingLog, { callback, verifier, state: "" });
    expect(decodeJwt(plain.access_token).aud).toBe(`${api.url}/v1`);
  });

  it("refuses another resource at the token endpoint with invalid_target (RFC 8707 §2.2)", async () => {
    const person = await api.person();
    const authorized = await approve(trainingLog, person.id);
    const err = await failure(exchange(trainingLog, authorized, { extra: { resource: "https://elsewhere.example/v1" } }));
    expect(err).toMatchObject({ status: 400, error: "invalid_target" });
    const ok = await exchange(trainingLog, await approve(trainingLog, person.id), { extra: { resource: `${api.url}/v1` } });
    expect(ok.access_token).toBeTruthy();
  });
});

describe("tokens bound to one resource (RFC 8707, CONTRACT §6 and §12)", () => {
  const mcp = () => `${api.url}/mcp`;

  it("serves RFC 9728 metadata for {base_url}/mcp: the read scopes and location.read", async () => {
    const resource = new URL(mcp());
    const rs = await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, insecure));
    expect(rs).toMatchObject({ resource: mcp(), authorization_servers: [api.url] });
    expect([...(rs.scopes_supported ?? [])].sort()).toEqual(["activities.read", "athlete.read", "location.read", "metrics.read", "teams.read"]);
  });

  it("resource={base_url}/mcp gives a token whose aud is /mcp, and /v1 refuses it with 401 token_invalid naming the resource", async () => {
    const person = await api.person();
    const tokens = await exchange(mobile, await approve(mobile, person.id, { extra: { resource: mcp() } }), { extra: { resource: mcp() } });
    expect(decodeJwt(tokens.access_token).aud).toBe(mcp());
    const res = await api.call(tokens.access_token, "GET", "/v1/athletes/me");
    expect(res.status).toBe(401);
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe("token_invalid");
    expect(body.detail).toContain(`resource=${api.url}/v1`);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    // The control: the same athlete's /v1 token reads /v1.
    const v1 = await connect(mobile, person.id, "athlete.read");
    expect((await api.call(v1.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
  });

  it("a refresh keeps the resource of its authorization, and asking for the other one is invalid_target", async () => {
    const person = await api.person();
    const first = await exchange(mobile, await approve(mobile, person.id, { extra: { resource: mcp() } }));
    expect(decodeJwt(first.access_token).aud).toBe(mcp());
    const refreshed = await refresh(mobile, first.refresh_token!);
    expect(decodeJwt(refreshed.access_token).aud).toBe(mcp());
    const res = await oauth.refreshTokenGrantRequest(as, mobile.client, mobile.auth(), refreshed.refresh_token!, {
      ...insecure,
      additionalParameters: { resource: `${api.url}/v1` },
    });
    expect(await failure(oauth.processRefreshTokenResponse(as, mobile.client, res))).toMatchObject({ status: 400, error: "invalid_target" });
  });

  it("a code for /mcp exchanged with resource=/v1 is invalid_target, and the code is used up", async () => {
    const person = await api.person();
    const authorized = await approve(mobile, person.id, { extra: { resource: mcp() } });
    expect(await failure(exchange(mobile, authorized, { extra: { resource: `${api.url}/v1` } }))).toMatchObject({ status: 400, error: "invalid_target" });
    expect(await failure(exchange(mobile, authorized))).toMatchObject({ status: 400, error: "invalid_grant" });
  });

  it("a resource that is neither is refused at the authorization endpoint with invalid_target", async () => {
    const person = await api.person();
    const verifier = oauth.generateRandomCodeVerifier();
    const step = await decideAuthorization(
      db,
      {
        client_id: "demo-mobile",
        redirect_uri: mobile.redirectUri,
        response_type: "code",
        scope: "athlete.read",
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        resource: `${api.url}/mcp/`,
      },
      person.id,
      "allow",
    );
    expect(step.kind).toBe("error_return");
    expect((step as { returnUrl: string }).returnUrl).toContain("error=invalid_target");
  });

  it("a client-credentials token is only for /v1", async () => {
    const res = await oauth.clientCredentialsGrantRequest(as, trainingLog.client, trainingLog.auth(), { resource: mcp() }, insecure);
    expect(await failure(oauth.processClientCredentialsResponse(as, trainingLog.client, res))).toMatchObject({ status: 400, error: "invalid_target" });
  });

  it("a token's use is recorded on its grant, to the minute, for /settings/apps", async () => {
    const person = await api.person();
    const { access_token } = await connect(trainingLog, person.id, "athlete.read");
    const grantId = decodeJwt(access_token).gid as string;
    const before = await db.select({ at: oauthGrants.lastUsedAt }).from(oauthGrants).where(eq(oauthGrants.id, grantId));
    expect(before[0]!.at).toBeNull();
    expect((await api.call(access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    // The write is not awaited by the request: poll until it lands.
    let at: Date | null = null;
    for (let i = 0; i < 100 && !at; i++) {
      [{ at }] = (await db.select({ at: oauthGrants.lastUsedAt }).from(oauthGrants).where(eq(oauthGrants.id, grantId))) as [{ at: Date | null }];
      if (!at) await new Promise((r) => setTimeout(r, 20));
    }
    expect(at).toBeInstanceOf(Date);
    expect(Math.abs(at!.getTime() - Date.now())).toBeLessThan(60_000);
  });
});

describe("authorization codes", () => {
  it("are single use, and a replay revokes the tokens the first exchange issued (RFC 6749 §4.1.2, RFC 9700 §4.5)", async () => {
    const person = await api.person();
    const authorized = await approve(trainingLog, person.id);
    const first = await exchange(trainingLog, authorized);
    expect((await api.call(first.access_token, "GET", "/v1/athletes/me")).status).toBe(200);

    expect(await failure(exchange(trainingLog, authorized))).toMatchObject({ status: 400, error: "invalid_grant" });
    await expectProblem(await api.call(first.access_token, "GET", "/v1/athletes/me"), 401, "token_revoked");
    expect(await failure(refresh(trainingLog, first.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
  });

  it("sent twice at once are exchanged once, and the replay still revokes what the exchange issued (RFC 6749 §4.1.2)", async () => {
    const person = await api.person();
    for (let round = 0; round < 5; round++) {
      const authorized = await approve(trainingLog, person.id);
      const results = await Promise.allSettled([0, 1, 2].map(() => exchange(trainingLog, authorized)));
      const issued = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      expect(issued).toHaveLength(1);
      for (const r of results) {
        if (r.status === "rejected") expect(await failure(Promise.reject(r.reason))).toMatchObject({ status: 400, error: "invalid_grant" });
      }
      await expectProblem(await api.call(issued[0]!.access_token, "GET", "/v1/athletes/me"), 401, "token_revoked");
      expect(await failure(refresh(trainingLog, issued[0]!.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
    }
  });

  it("live 60 seconds (CONTRACT §6)", async () => {
    const person = await api.person();
    const authorized = await approve(trainingLog, person.id);
    const codeHash = sha256Hex(authorized.callback.get("code")!);
    const [row] = await db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, codeHash));
    expect(Math.abs(row!.expiresAt.getTime() - row!.createdAt.getTime() - 60_000)).toBeLessThan(2_000);

    await db
      .update(oauthCodes)
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where(eq(oauthCodes.codeHash, codeHash));
    expect(await failure(exchange(trainingLog, authorized))).toMatchObject({ status: 400, error: "invalid_grant" });
  });

  it("refuse a redirect_uri other than the authorization request's with invalid_grant (RFC 6749 §4.1.3)", async () => {
    const person = await api.person();
    const authorized = await approve(trainingLog, person.id);
    const err = await failure(exchange(trainingLog, authorized, { redirectUri: `${api.url}/demo/callback` }));
    expect(err).toMatchObject({ status: 400, error: "invalid_grant" });

    // The loopback port is part of the redirect URI the code was bound to.
    const native = await approve(mobile, person.id);
    expect(await failure(exchange(mobile, native, { redirectUri: "http://127.0.0.1:61235/callback" }))).toMatchObject({ error: "invalid_grant" });
  });

  it("refuse a wrong code_verifier with invalid_grant (RFC 7636 §4.6)", async () => {
    const person = await api.person();
    for (const app of [trainingLog, mobile]) {
      const authorized = await approve(app, person.id);
      const err = await failure(exchange(app, authorized, { verifier: oauth.generateRandomCodeVerifier() }));
      expect(err).toMatchObject({ status: 400, error: "invalid_grant" });
    }
  });

  it("refuse an exchange without code_verifier with invalid_request (RFC 7636 §4.5)", async () => {
    const person = await api.person();
    const authorized = await approve(trainingLog, person.id);
    const res = await post(
      "/oauth/token",
      { grant_type: "authorization_code", code: authorized.callback.get("code")!, redirect_uri: trainingLog.redirectUri },
      { authorization: basic("demo-training-log", DEMO_CONFIDENTIAL_SECRET) },
    );
    await expectOAuthError(res, 400, "invalid_request");
  });

  it("refuse an exchange without redirect_uri with invalid_request (RFC 6749 §4.1.3), and leave the code unused", async () => {
    const person = await api.person();
    const authorized = await approve(trainingLog, person.id);
    const res = await post(
      "/oauth/token",
      { grant_type: "authorization_code", code: authorized.callback.get("code")!, code_verifier: authorized.verifier },
      { authorization: basic("demo-training-log", DEMO_CONFIDENTIAL_SECRET) },
    );
    expect(await res.clone().json()).toMatchObject({ error_description: expect.stringContaining("redirect_uri") });
    await expectOAuthError(res, 400, "invalid_request");
    expect(await exchange(trainingLog, authorized)).toMatchObject({ access_token: expect.any(String) });
  });

  it("issued to one client are refused to another with invalid_grant (RFC 6749 §4.1.3)", async () => {
    const person = await api.person();
    const forLog = await approve(trainingLog, person.id);
    expect(await failure(exchange(mobile, forLog, { redirectUri: trainingLog.redirectUri }))).toMatchObject({ status: 400, error: "invalid_grant" });

    const forMobile = await approve(mobile, person.id);
    expect(await failure(exchange(trainingLog, forMobile, { redirectUri: mobile.redirectUri }))).toMatchObject({ status: 400, error: "invalid_grant" });
  });

  it("are refused once the athlete disconnects the app before the exchange", async () => {
    const person = await api.person();
    const authorized = await approve(trainingLog, person.id);
    const grant = await grantOf("demo-training-log", person.id);
    await inWriteCtx(session(person.id), (ctx) => disconnectApp({ ctx, grantId: grant!.id }));
    expect(await failure(exchange(trainingLog, authorized))).toMatchObject({ status: 400, error: "invalid_grant" });
  });
});

describe("access tokens", () => {
  it("are RFC 9068 JWTs: at+jwt, ES256, a kid in /oauth/jwks, aud {base_url}/v1, iss, one hour, client_id and scope (RFC 9068 §2)", async () => {
    const person = await api.person();
    const tokens = await connect(trainingLog, person.id, "athlete.read activities.read");
    const header = decodeProtectedHeader(tokens.access_token);
    expect(header).toMatchObject({ typ: "at+jwt", alg: "ES256" });
    const { keys } = (await (await fetch(as.jwks_uri!)).json()) as { keys: JWK[] };
    expect(keys.map((k) => k.kid)).toContain(header.kid);

    const { payload } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(as.jwks_uri!)), {
      typ: "at+jwt",
      algorithms: ["ES256"],
      issuer: api.url,
      audience: `${api.url}/v1`,
    });
    expect(payload).toMatchObject({ iss: api.url, aud: `${api.url}/v1`, sub: person.id, client_id: "demo-training-log", scope: "athlete.read activities.read" });
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(60);
    expect(payload.jti).toEqual(expect.any(String));

    // The resource-server side of oauth4webapi (RFC 9068 §4) accepts it too.
    const request = new Request(`${api.url}/v1/athletes/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    const claims = await oauth.validateJwtAccessToken(as, request, `${api.url}/v1`, insecure);
    expect(claims.client_id).toBe("demo-training-log");
  });

  it("are refused when forged, tampered with, expired, for another audience or not typed at+jwt (RFC 9068 §4)", async () => {
    const person = await api.person();
    const { access_token } = await connect(trainingLog, person.id, "athlete.read");
    const claims = decodeJwt(access_token);
    const [key] = await db.select().from(signingKeys).where(isNull(signingKeys.retiredAt));
    const serviceKey = await importJWK(privateJwkOf(key!.privateJwk), "ES256");
    const sign = (payload: JWTPayload, typ = "at+jwt", k: Parameters<SignJWT["sign"]>[0] = serviceKey) =>
      new SignJWT(payload).setProtectedHeader({ alg: "ES256", typ, kid: key!.kid }).sign(k);
    const now = Math.floor(Date.now() / 1000);

    // The control: the service's own key over the same claims is accepted.
    expect((await api.call(await sign(claims), "GET", "/v1/athletes/me")).status).toBe(200);

    const otherKey = (await generateKeyPair("ES256")).privateKey;
    const [h, p, s] = access_token.split(".");
    const morePayload = Buffer.from(JSON.stringify({ ...claims, scope: "athlete.read activities.read" })).toString("base64url");
    const refused: [string, string, string][] = [
      ["signed by another key under the service's kid", await sign(claims, "at+jwt", otherKey), "token_invalid"],
      ["payload changed after signing", `${h}.${morePayload}.${s}`, "token_invalid"],
      ["signature stripped", `${h}.${p}.`, "token_invalid"],
      ["alg none", `${Buffer.from(JSON.stringify({ alg: "none", typ: "at+jwt" })).toString("base64url")}.${p}.x`, "token_invalid"],
      ["another audience", await sign({ ...claims, aud: `${api.url}/v2` }), "token_invalid"],
      ["another issuer", await sign({ ...claims, iss: "https://issuer.example" }), "token_invalid"],
      ["typed JWT, as an ID token is (RFC 9068 §4)", await sign(claims, "JWT"), "token_invalid"],
      ["expired", await sign({ ...claims, iat: now - 3700, exp: now - 100 }), "token_expired"],
    ];
    for (const [what, token, code] of refused) {
      const res = await api.call(token, "GET", "/v1/athletes/me");
      const body = (await res.json()) as { code: string };
      expect({ what, status: res.status, code: body.code }).toEqual({ what, status: 401, code });
      expect(res.headers.get("www-authenticate"), what).toContain('error="invalid_token"');
    }
  });

  it("carry their scopes on /v1 as PATs do: 403 insufficient_scope with the scope named (RFC 6750 §3.1)", async () => {
    const person = await api.person();
    const { access_token } = await connect(trainingLog, person.id, "athlete.read");
    expect((await api.call(access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    for (const [method, path, scope] of [
      ["GET", "/v1/athletes/me/activities", "activities.read"],
      ["GET", "/v1/athletes/me/metrics", "metrics.read"],
      ["GET", "/v1/teams", "teams.read"],
      ["POST", "/v1/athletes/me/activities", "activities.write"],
    ] as const) {
      const res = await api.call(access_token, method, path, method === "POST" ? { body: {} } : {});
      await expectProblem(res, 403, "insufficient_scope");
      expect(res.headers.get("www-authenticate"), path).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
    }
    const withActivities = await connect(trainingLog, person.id, "activities.read");
    const list = await api.call(withActivities.access_token, "GET", "/v1/athletes/me/activities");
    expect(list.status).toBe(200);
  });

  it("reach what the athlete reaches: a coach's token reads team members and no one else (403 athlete_not_reachable)", async () => {
    const { access_token } = await connect(trainingLog, demo.cora, "athlete.read teams.read");
    const ava = await api.call(access_token, "GET", `/v1/athletes/${demo.ava}`);
    expect(ava.status).toBe(200);
    expect(await ava.json()).toMatchObject({ id: demo.ava, email: "ava@example.com" });
    expect((await api.call(access_token, "GET", `/v1/athletes/${demo.dan}`)).status).toBe(200);
    await expectProblem(await api.call(access_token, "GET", `/v1/athletes/${demo.eve}`), 403, "athlete_not_reachable");

    // An athlete's token reaches only the athlete.
    const eve = await connect(trainingLog, demo.eve, "athlete.read");
    await expectProblem(await api.call(eve.access_token, "GET", `/v1/athletes/${demo.ava}`), 403, "athlete_not_reachable");
  });

  it("of an athlete without subscription or trial get 402 subscription_required", async () => {
    const { access_token } = await connect(mobile, demo.ben, "athlete.read");
    await expectProblem(await api.call(access_token, "GET", "/v1/athletes/me"), 402, "subscription_required");
  });
});

describe("refresh tokens", () => {
  it("rotate: every refresh returns a new refresh token and the old one is refused (RFC 9700 §4.14.2)", async () => {
    const person = await api.person();
    const first = await connect(trainingLog, person.id);
    const second = await refresh(trainingLog, first.refresh_token!);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second).toMatchObject({ token_type: "bearer", expires_in: 3600, scope: "athlete.read activities.read" });
    expect(isWellFormedToken(second.refresh_token!, "refresh")).toBe(true);
    const third = await refresh(trainingLog, second.refresh_token!);
    expect(new Set([first.refresh_token, second.refresh_token, third.refresh_token]).size).toBe(3);
    expect((await api.call(third.access_token, "GET", "/v1/athletes/me")).status).toBe(200);

    expect(await failure(refresh(trainingLog, second.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
  });

  it("reused after rotation revoke the grant: the latest access and refresh tokens stop too (RFC 9700 §4.14.2)", async () => {
    const person = await api.person();
    const first = await connect(trainingLog, person.id);
    const latest = await refresh(trainingLog, first.refresh_token!);
    expect((await api.call(latest.access_token, "GET", "/v1/athletes/me")).status).toBe(200);

    expect(await failure(refresh(trainingLog, first.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
    await expectProblem(await api.call(latest.access_token, "GET", "/v1/athletes/me"), 401, "token_revoked");
    expect(await failure(refresh(trainingLog, latest.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
    // The authorization is gone: the app must ask the athlete again.
    expect(await grantOf("demo-training-log", person.id)).toBeUndefined();
    // And it is told, once, as at a disconnect (CONTRACT §7): a second reuse ends nothing more.
    expect(await failure(refresh(trainingLog, first.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
    const told = await db
      .select({ type: schema.events.type, clientId: schema.events.clientId })
      .from(schema.events)
      .where(and(eq(schema.events.athleteId, person.id), eq(schema.events.type, "athlete.deauthorized")));
    expect(told).toEqual([{ type: "athlete.deauthorized", clientId: "demo-training-log" }]);
  });

  it("sent twice at once rotate once; the other use is a reuse and ends the grant (compare-and-swap, CONTRACT §6)", async () => {
    for (let round = 0; round < 5; round++) {
      const person = await api.person();
      const { refresh_token } = await connect(trainingLog, person.id);
      const results = await Promise.allSettled([0, 1, 2].map(() => refresh(trainingLog, refresh_token!)));
      const rotated = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      expect(rotated).toHaveLength(1);
      for (const r of results) {
        if (r.status === "rejected") expect(await failure(Promise.reject(r.reason))).toMatchObject({ status: 400, error: "invalid_grant" });
      }
      for (const t of rotated) {
        await expectProblem(await api.call(t.access_token, "GET", "/v1/athletes/me"), 401, "token_revoked");
        expect(await failure(refresh(trainingLog, t.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
      }
      expect(await grantOf("demo-training-log", person.id)).toBeUndefined();
    }
  });

  it("rotate in one transaction: a database failure while issuing the new pair rolls the rotation back, so the retry succeeds and is no reuse (CONTRACT §6)", async () => {
    const person = await api.person();
    const tokens = await connect(trainingLog, person.id);
    const auth = { authorization: basic("demo-training-log", DEMO_CONFIDENTIAL_SECRET) };
    // A real failure after the compare-and-swap: the database refuses the new refresh token.
    await db.execute(sql`create function aas_test_refuse() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`);
    await db.execute(sql`create trigger aas_test_refuse before insert on ${oauthRefreshTokens} for each row execute function aas_test_refuse()`);
    let failed: Response;
    try {
      failed = await post("/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.refresh_token! }, auth);
    } finally {
      await db.execute(sql`drop trigger aas_test_refuse on ${oauthRefreshTokens}`);
      await db.execute(sql`drop function aas_test_refuse()`);
    }
    await expectOAuthError(failed, 500, "server_error");
    const [row] = await db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.tokenHash, sha256Hex(tokens.refresh_token!)));
    expect(row!.rotatedAt).toBeNull();

    // The client retries with the same refresh token, as it should: a first use, not a reuse.
    const next = await refresh(trainingLog, tokens.refresh_token!);
    expect((await api.call(next.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    expect((await api.call(tokens.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    expect((await grantOf("demo-training-log", person.id))?.revokedAt).toBeNull();
    // And the rotation did happen: the old token is now spent.
    expect(await failure(refresh(trainingLog, tokens.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
  });

  it("can narrow the scopes but never widen them (RFC 6749 §6)", async () => {
    const person = await api.person();
    const first = await connect(trainingLog, person.id, "athlete.read activities.read");
    const narrow = await refresh(trainingLog, first.refresh_token!, "athlete.read");
    expect(narrow.scope).toBe("athlete.read");
    expect(decodeJwt(narrow.access_token).scope).toBe("athlete.read");
    expect((await api.call(narrow.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    await expectProblem(await api.call(narrow.access_token, "GET", "/v1/athletes/me/activities"), 403, "insufficient_scope");

    for (const scope of ["athlete.read metrics.read", "metrics.read", "admin", " "]) {
      expect(await failure(refresh(trainingLog, narrow.refresh_token!, scope)), scope).toMatchObject({ status: 400, error: "invalid_scope" });
    }

    // A refused widening rotates nothing: the refresh token still works.
    const again = await refresh(trainingLog, narrow.refresh_token!);
    expect(again.refresh_token).toBeTruthy();
    // `scope=` is no scope parameter (RFC 6749 §3.1): the grant's scopes, as without one.
    const unnamed = await refresh(trainingLog, again.refresh_token!, "");
    expect(unnamed.scope).toBe(again.scope);
  });

  it("are bound to the client they were issued to (RFC 6749 §6)", async () => {
    const person = await api.person();
    const { refresh_token } = await connect(trainingLog, person.id);
    expect(await failure(refresh(mobile, refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
    // The refusal did not burn the token for its own client.
    expect((await refresh(trainingLog, refresh_token!)).access_token).toBeTruthy();
  });

  it("live 90 days, then are refused with invalid_grant (CONTRACT §6)", async () => {
    const person = await api.person();
    const { refresh_token } = await connect(trainingLog, person.id);
    const hash = sha256Hex(refresh_token!);
    const [row] = await db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.tokenHash, hash));
    expect(Math.abs(row!.expiresAt.getTime() - row!.createdAt.getTime() - 90 * 86_400_000)).toBeLessThan(5_000);
    await db
      .update(oauthRefreshTokens)
      .set({ expiresAt: new Date(Date.now() - 1_000) })
      .where(eq(oauthRefreshTokens.tokenHash, hash));
    expect(await failure(refresh(trainingLog, refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
  });

  it("that the server never issued, or malformed, are invalid_grant", async () => {
    for (const token of ["aas_rt_NotARealTokenButWellShaped000000000000", "garbage", "aas_pat_x"]) {
      expect(await failure(refresh(trainingLog, token)), token).toMatchObject({ status: 400, error: "invalid_grant" });
    }
  });
});

describe("revocation (RFC 7009)", () => {
  it("of a refresh token stops its access token on the next request and the refresh token itself (RFC 7009 §2.1)", async () => {
    const person = await api.person();
    const tokens = await connect(trainingLog, person.id);
    expect((await api.call(tokens.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    await revoke(trainingLog, tokens.refresh_token!);
    await expectProblem(await api.call(tokens.access_token, "GET", "/v1/athletes/me"), 401, "token_revoked");
    expect(await failure(refresh(trainingLog, tokens.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
  });

  it("of an access token stops it and the refresh token issued with it (RFC 7009 §2.1)", async () => {
    const person = await api.person();
    const tokens = await connect(mobile, person.id);
    await revoke(mobile, tokens.access_token);
    await expectProblem(await api.call(tokens.access_token, "GET", "/v1/athletes/me"), 401, "token_revoked");
    expect(await failure(refresh(mobile, tokens.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
  });

  it("stops one token family only: the same athlete's other sign-in to the app keeps working", async () => {
    const person = await api.person();
    const phone = await connect(trainingLog, person.id);
    const laptop = await connect(trainingLog, person.id);
    await revoke(trainingLog, phone.refresh_token!);
    expect((await api.call(laptop.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    expect((await refresh(trainingLog, laptop.refresh_token!)).access_token).toBeTruthy();
  });

  it("answers 200 for an unknown token, and for another client's token, which it leaves alone (RFC 7009 §2.2)", async () => {
    for (const token of ["aas_rt_NotARealTokenButWellShaped000000000000", "not-a-token", "a.b.c"]) {
      await expect(revoke(trainingLog, token)).resolves.toBeUndefined();
    }
    const person = await api.person();
    const tokens = await connect(trainingLog, person.id);
    const res = await post("/oauth/revoke", { token: tokens.refresh_token!, client_id: "demo-mobile" });
    expect(res.status).toBe(200);
    expect((await api.call(tokens.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    expect((await refresh(trainingLog, tokens.refresh_token!)).access_token).toBeTruthy();
  });

  it("of a client-credentials token is unsupported_token_type (RFC 7009 §2.2.1)", async () => {
    const { access_token } = await clientCredentials(trainingLog);
    expect(await failure(revoke(trainingLog, access_token))).toMatchObject({ status: 400, error: "unsupported_token_type" });
  });

  it("authenticates the client like the token endpoint does (RFC 7009 §2.1)", async () => {
    const res = await post("/oauth/revoke", { token: "x" }, { authorization: basic("demo-training-log", "wrong") });
    await expectOAuthError(res, 401, "invalid_client");
    expect(res.headers.get("www-authenticate")).toMatch(/^Basic /);
    await expectOAuthError(await post("/oauth/revoke", { client_id: "demo-mobile" }), 400, "invalid_request");
  });

  it("refuses a repeated parameter with invalid_request, as the token endpoint does, and revokes nothing (RFC 6749 §3.1, RFC 7009 §2.1)", async () => {
    const person = await api.person();
    const tokens = await connect(mobile, person.id);
    const token = encodeURIComponent(tokens.refresh_token!);
    for (const body of [`token=${token}&token=x&client_id=demo-mobile`, `token=${token}&token=${token}&client_id=demo-mobile`, `token=${token}&client_id=demo-mobile&client_id=demo-mobile`]) {
      await expectOAuthError(await post("/oauth/revoke", body), 400, "invalid_request");
    }
    expect((await api.call(tokens.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    expect((await refresh(mobile, tokens.refresh_token!)).access_token).toBeTruthy();
  });
});

describe("client credentials (RFC 6749 §4.4)", () => {
  const appOps = OPERATIONS.filter((op) => op.auth === "app");
  const athleteOps = OPERATIONS.filter((op) => op.auth === "athlete");
  const concrete = (path: string) => path.replace("{athlete_id}", "me").replace(/\{\w+\}/g, "x_123");

  it("gives a confidential client a token for itself, with no refresh token and no athlete scope", async () => {
    const tokens = await clientCredentials(trainingLog);
    expect(tokens).toMatchObject({ token_type: "bearer", expires_in: 3600 });
    expect(tokens.refresh_token).toBeUndefined();
    // No scope member: a scope is at least one token (RFC 6749 §3.3), and this token carries none.
    expect(tokens).not.toHaveProperty("scope");
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ sub: "demo-training-log", client_id: "demo-training-log", aud: `${api.url}/v1` });
    expect(claims.scope).toBeUndefined();
  });

  it("the token works on /v1/app/*: every operation takes it, and those without parameters answer in their schema", async () => {
    const { access_token } = await clientCredentials(trainingLog);
    // No operation to call would make this test pass without proving anything.
    expect(appOps.length, "OPERATIONS lists no auth: app operation").toBeGreaterThan(0);
    const plainGets = appOps.filter((o) => o.method === "GET" && !o.path.includes("{"));
    expect(plainGets.length, "no /v1/app GET without parameters").toBeGreaterThan(0);
    for (const op of appOps) {
      const res = await api.call(access_token, op.method, concrete(op.path), op.method === "GET" ? {} : { body: {} });
      const body = (await res.json()) as { code?: string };
      if (plainGets.includes(op)) {
        expect(res.status, op.path).toBe(200);
        expect(() => op.response.schema?.parse(body), op.path).not.toThrow();
      } else {
        // Answers about the request, which come only after the credential was accepted: the
        // body failed its schema (400), or the verb ran and found no such subscription (404).
        expect(["400 invalid_request", "404 not_found"], `${op.method} ${op.path}`).toContain(`${res.status} ${body.code}`);
      }
    }
  });

  it("every endpoint that reads or writes athlete data refuses the token with 403 client_credentials_not_allowed (CONTRACT §2)", async () => {
    const { access_token } = await clientCredentials(trainingLog);
    expect(athleteOps.length).toBeGreaterThan(5);
    for (const op of athleteOps) {
      const res = await api.call(access_token, op.method, concrete(op.path), op.method === "GET" ? {} : { body: {} });
      await expectProblem(res, 403, "client_credentials_not_allowed");
    }
  });

  it("/v1/app/* refuses a PAT and an athlete's access token with 403 client_credentials_required (CONTRACT §2)", async () => {
    expect(appOps.length, "OPERATIONS lists no auth: app operation").toBeGreaterThan(0);
    const person = await api.person();
    const pat = await api.pat(person.id);
    const { access_token } = await connect(trainingLog, person.id);
    for (const op of appOps) {
      for (const token of [pat, access_token]) {
        await expectProblem(await api.call(token, op.method, concrete(op.path), op.method === "GET" ? {} : { body: {} }), 403, "client_credentials_required");
      }
    }
  });

  it("stops at once when the app's secret is rotated, the owner's answer to a leak (401 token_revoked); athletes' tokens keep working", async () => {
    const developer = await api.person();
    const redirectUri = "https://leaky.example/cb";
    const { app, client_secret } = await inWriteCtx(session(developer.id), (ctx) => registerApp({ ctx, input: { name: "Leaky", kind: "confidential", redirect_uris: [redirectUri] } }));
    const leaky: App = { client: { client_id: app.client_id }, auth: () => oauth.ClientSecretBasic(client_secret!), redirectUri };
    const athlete = await api.person();
    const athleteTokens = await connect(leaky, athlete.id);
    const leaked = await clientCredentials(leaky);
    expect((await api.call(leaked.access_token, "GET", "/v1/app/usage")).status).toBe(200);

    const { client_secret: rotated } = await inWriteCtx(session(developer.id), (ctx) => rotateClientSecret({ ctx, clientId: app.client_id }));
    const res = await api.call(leaked.access_token, "GET", "/v1/app/usage");
    await expectProblem(res, 401, "token_revoked");
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');

    const fresh = await clientCredentials({ ...leaky, auth: () => oauth.ClientSecretBasic(rotated!) });
    expect((await api.call(fresh.access_token, "GET", "/v1/app/usage")).status).toBe(200);
    expect((await api.call(athleteTokens.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
  });

  it("is refused to a public client with unauthorized_client (RFC 6749 §4.4, §5.2)", async () => {
    expect(await failure(clientCredentials(mobile))).toMatchObject({ status: 400, error: "unauthorized_client" });
  });

  it("refuses athlete scopes with invalid_scope (RFC 6749 §3.3)", async () => {
    for (const scope of ["athlete.read", "activities.read metrics.read", "admin"]) {
      expect(await failure(clientCredentials(trainingLog, { scope })), scope).toMatchObject({ status: 400, error: "invalid_scope" });
    }
  });
});

describe("token endpoint errors (RFC 6749 §5.2)", () => {
  const good = { grant_type: "client_credentials" };

  it("invalid_client is 401, with WWW-Authenticate: Basic where the client used the Authorization header: wrong secret, unknown client, public client with Basic, confidential client without auth", async () => {
    // Where the client sent no Authorization header there is no challenge: a browser would
    // answer it with its own password prompt over the calling page (RFC 6749 §5.2 makes it a MAY).
    const cases: [string, Record<string, string>, Record<string, string>][] = [
      ["wrong secret", good, { authorization: basic("demo-training-log", "aas_cs_wrong") }],
      ["unknown client by Basic", good, { authorization: basic("no-such-app", "secret") }],
      ["unknown client by client_id", { ...good, client_id: "no-such-app" }, {}],
      ["public client sending Basic", good, { authorization: basic("demo-mobile", "anything") }],
      ["public client sending Basic with an empty secret", good, { authorization: basic("demo-mobile", "") }],
      ["confidential client without authentication", { ...good, client_id: "demo-training-log" }, {}],
      ["no client at all", good, {}],
      ["secret in the body (client_secret_post is not offered)", { ...good, client_id: "demo-training-log", client_secret: DEMO_CONFIDENTIAL_SECRET }, {}],
      ["secret in the body beside HTTP Basic", { ...good, client_secret: DEMO_CONFIDENTIAL_SECRET }, { authorization: basic("demo-training-log", DEMO_CONFIDENTIAL_SECRET) }],
      ["Authorization that is not Basic", good, { authorization: "Bearer abc" }],
    ];
    for (const [what, body, headers] of cases) {
      const res = await post("/oauth/token", body, headers);
      expect(res.status, what).toBe(401);
      if (headers.authorization) expect(res.headers.get("www-authenticate"), what).toMatch(/^Basic realm="/);
      else expect(res.headers.get("www-authenticate"), what).toBeNull();
      await expectOAuthError(res, 401, "invalid_client");
    }
    // The same credentials, right, succeed.
    expect((await post("/oauth/token", good, { authorization: basic("demo-training-log", DEMO_CONFIDENTIAL_SECRET) })).status).toBe(200);
  });

  it("a client_id holding a NUL is an unknown client at the token and revocation endpoints: 401 invalid_client, not a database error", async () => {
    const nulInBasic = `Basic ${Buffer.from("demo-training-log\u0000:secret").toString("base64")}`;
    for (const path of ["/oauth/token", "/oauth/revoke"] as const) {
      const cases: [string, string, Record<string, string>][] = [
        ["client_id in the body", "grant_type=client_credentials&token=x&client_id=a%00b", {}],
        ["HTTP Basic, form-encoded", "grant_type=client_credentials&token=x", { authorization: basic("a\u0000b", "secret") }],
        ["HTTP Basic, raw", "grant_type=client_credentials&token=x", { authorization: nulInBasic }],
      ];
      for (const [what, body, headers] of cases) {
        const res = await post(path, body, headers);
        expect(res.status, `${path}: ${what}`).toBe(401);
        if (headers.authorization) expect(res.headers.get("www-authenticate"), `${path}: ${what}`).toMatch(/^Basic realm="/);
        else expect(res.headers.get("www-authenticate"), `${path}: ${what}`).toBeNull();
        await expectOAuthError(res, 401, "invalid_client");
      }
    }
  });

  it("unsupported_grant_type for grants this server does not offer", async () => {
    for (const grant_type of ["password", "implicit", "urn:ietf:params:oauth:grant-type:device_code", "token"]) {
      await expectOAuthError(await post("/oauth/token", { grant_type }, { authorization: basic("demo-training-log", DEMO_CONFIDENTIAL_SECRET) }), 400, "unsupported_grant_type");
    }
  });

  it("invalid_request for missing parameters, repeated parameters and a body that is not form-encoded", async () => {
    const auth = { authorization: basic("demo-training-log", DEMO_CONFIDENTIAL_SECRET) };
    const cases: [string, string, Record<string, string>][] = [
      ["no grant_type", "", auth],
      ["authorization_code without code", "grant_type=authorization_code&code_verifier=" + "a".repeat(43), auth],
      ["refresh_token without refresh_token", "grant_type=refresh_token", auth],
      ["repeated grant_type", "grant_type=client_credentials&grant_type=client_credentials", auth],
      ["repeated client_id", "grant_type=refresh_token&refresh_token=x&client_id=demo-mobile&client_id=demo-mobile", {}],
      ["client_id differing from Basic", "grant_type=client_credentials&client_id=demo-mobile", auth],
    ];
    for (const [what, body, headers] of cases) {
      const res = await post("/oauth/token", body, headers);
      expect(res.status, what).toBe(400);
      await expectOAuthError(res, 400, "invalid_request");
    }
    for (const contentType of ["application/json", "text/plain", "multipart/form-data; boundary=x"]) {
      const res = await fetch(`${api.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": contentType, ...auth },
        body: contentType === "application/json" ? JSON.stringify(good) : "grant_type=client_credentials",
      });
      await expectOAuthError(res, 400, "invalid_request");
    }
    await expectOAuthError(await fetch(`${api.url}/oauth/token`, { method: "POST", headers: auth }), 400, "invalid_request");
  });

  it("`resource` named twice is that one resource; two different ones are invalid_target (RFC 8707 §2)", async () => {
    const auth = { authorization: basic("demo-training-log", DEMO_CONFIDENTIAL_SECRET) };
    const v1 = encodeURIComponent(`${api.url}/v1`);
    const same = await post("/oauth/token", `grant_type=client_credentials&resource=${v1}&resource=${v1}`, auth);
    expect(same.status, await same.clone().text()).toBe(200);
    expect(decodeJwt(((await same.json()) as { access_token: string }).access_token).aud).toBe(`${api.url}/v1`);
    const two = await post("/oauth/token", `grant_type=client_credentials&resource=${v1}&resource=${encodeURIComponent(`${api.url}/mcp`)}`, auth);
    await expectOAuthError(two, 400, "invalid_target");
  });
});

describe("disconnecting and deleting", () => {
  it("disconnecting an app stops its refresh tokens at once and its access tokens on the next request", async () => {
    const person = await api.person();
    const tokens = await connect(trainingLog, person.id);
    const other = await connect(mobile, person.id);
    expect((await api.call(tokens.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    const grant = await grantOf("demo-training-log", person.id);

    await inWriteCtx(session(person.id), (ctx) => disconnectApp({ ctx, grantId: grant!.id }));
    expect(await failure(refresh(trainingLog, tokens.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
    const res = await api.call(tokens.access_token, "GET", "/v1/athletes/me");
    await expectProblem(res, 401, "token_revoked");
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    // Other apps are untouched; this one must ask again.
    expect((await api.call(other.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    const again = await prepareAuthorization(
      db,
      {
        client_id: "demo-training-log",
        redirect_uri: trainingLog.redirectUri,
        response_type: "code",
        scope: "athlete.read",
        code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
        code_challenge_method: "S256",
      },
      [],
      person.id,
    );
    expect(again.kind).toBe("consent");
  });

  it("connecting again after a disconnect makes a new authorization: the old tokens stay refused", async () => {
    const person = await api.person();
    const old = await connect(mobile, person.id);
    const oldGrant = await grantOf("demo-mobile", person.id);
    await inWriteCtx(session(person.id), (ctx) => disconnectApp({ ctx, grantId: oldGrant!.id }));

    const fresh = await connect(mobile, person.id);
    expect((await grantOf("demo-mobile", person.id))!.id).not.toBe(oldGrant!.id);
    expect((await api.call(fresh.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    await expectProblem(await api.call(old.access_token, "GET", "/v1/athletes/me"), 401, "token_revoked");
    expect(await failure(refresh(mobile, old.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" });
  });

  it("deleting an app ends its client-credentials tokens and every athlete's tokens", async () => {
    const developer = await api.person();
    const { app, client_secret } = await inWriteCtx(session(developer.id), (ctx) => registerApp({ ctx, input: { name: "Short Lived", kind: "confidential", redirect_uris: ["https://short.example/cb"] } }));
    const short: App = { client: { client_id: app.client_id }, auth: () => oauth.ClientSecretBasic(client_secret!), redirectUri: "https://short.example/cb" };
    const athlete = await api.person();
    const tokens = await connect(short, athlete.id);
    const cc = await clientCredentials(short);
    expect((await api.call(tokens.access_token, "GET", "/v1/athletes/me")).status).toBe(200);
    expect((await api.call(cc.access_token, "GET", "/v1/athletes/me")).status).toBe(403);

    await inWriteCtx(session(developer.id), (ctx) => deleteApp({ ctx, clientId: app.client_id }));
    await expectProblem(await api.call(tokens.access_token, "GET", "/v1/athletes/me"), 401, "token_revoked");
    await expectProblem(await api.call(cc.access_token, "GET", "/v1/athletes/me"), 401, "token_revoked");
    for (const op of OPERATIONS.filter((o) => o.auth === "app" && o.method === "GET")) {
      await expectProblem(await api.call(cc.access_token, "GET", op.path), 401, "token_revoked");
    }
    expect(await failure(refresh(short, tokens.refresh_token!))).toMatchObject({ status: 401, error: "invalid_client" });
    expect(await failure(clientCredentials(short))).toMatchObject({ status: 401, error: "invalid_client" });
  });
});

describe("storage", () => {
  it("keeps codes and refresh tokens only as hashes: the raw values are nowhere in the database (CONTRACT §6)", async () => {
    const person = await api.person();
    const authorized = await approve(trainingLog, person.id);
    const code = authorized.callback.get("code")!;
    const tokens = await exchange(trainingLog, authorized);
    const rotated = await refresh(trainingLog, tokens.refresh_token!);
    const cc = await clientCredentials(trainingLog);

    const everything: string[] = [];
    for (const table of Object.values(schema)) {
      if (!is(table, PgTable)) continue;
      for (const row of await db.select().from(table)) {
        everything.push(JSON.stringify(row, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v)));
      }
    }
    const dump = everything.join("\n");
    for (const raw of [code, tokens.refresh_token!, rotated.refresh_token!, tokens.access_token, rotated.access_token, cc.access_token, DEMO_CONFIDENTIAL_SECRET]) {
      expect(dump.includes(raw), raw.slice(0, 12)).toBe(false);
    }
    // The control: their hashes are there, so the search looked in the right place.
    expect(dump).toContain(sha256Hex(code));
    expect(dump).toContain(sha256Hex(tokens.refresh_token!));
    expect(dump).toContain(sha256Hex(rotated.refresh_token!));
    const hashes = await db
      .select({ h: oauthRefreshTokens.tokenHash })
      .from(oauthRefreshTokens)
      .where(inArray(oauthRefreshTokens.tokenHash, [sha256Hex(tokens.refresh_token!), sha256Hex(rotated.refresh_token!)]));
    expect(hashes).toHaveLength(2);
  });
});
