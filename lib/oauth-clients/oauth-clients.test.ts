import { describe, expect, it } from "vitest";
import { inWriteCtx } from "../http/operation";
import { eq, like } from "drizzle-orm";
import { sha256Hex } from "../crypto/random";
import { oauthClients, oauthCodes, oauthGrants, oauthRefreshTokens, oauthTokenFamilies, rateLimitCounters } from "../db/schema";
import { ApiError } from "../http/errors";
import { consumeRateLimit } from "../http/rate-limit";
import { sessionCookieFor } from "../auth/test-session";
import { refusal, setupApi } from "../testing/fixtures";
import { countRows } from "../testing/rows";
import { isWellFormedToken } from "../tokens/format";
import { newClientId, slugify } from "./client-id";
import { deleteApp } from "./delete-app";
import { getMyApp } from "./get-my-app";
import { listMyApps } from "./list-my-apps";
import { assertValidRedirectUris, pageUrlProblem, redirectUriProblem } from "./redirect-uris";
import { registerApp } from "./register-app";
import { rotateClientSecret } from "./rotate-client-secret";
import { RegisterAppInput, UpdateAppInput } from "./schemas";
import { updateApp } from "./update-app";

const api = setupApi();

async function storedHash(clientId: string): Promise<string | null> {
  const db = await api.db();
  const [row] = await db.select({ h: oauthClients.secretHash }).from(oauthClients).where(eq(oauthClients.clientId, clientId));
  return row!.h;
}

const confidential = (over: Partial<RegisterAppInput> = {}) =>
  RegisterAppInput.parse({ name: "Training Log", kind: "confidential", redirect_uris: ["https://log.example.com/callback"], ...over });

describe("redirect URI rules", () => {
  const ok = (uri: string, kind: "confidential" | "public" = "confidential") => expect(redirectUriProblem(uri, kind), uri).toBeNull();
  const bad = (uri: string, kind: "confidential" | "public", match: RegExp) => expect(redirectUriProblem(uri, kind), uri).toMatch(match);

  it("accepts https URIs with paths, ports and queries (RFC 6749 §3.1.2)", () => {
    ok("https://app.example.com/oauth/callback");
    ok("https://app.example.com:8443/cb?from=aas");
    ok("https://app.example.com/cb", "public");
  });

  it("refuses relative URIs: a redirect URI must be absolute (RFC 6749 §3.1.2)", () => {
    bad("/callback", "confidential", /absolute/);
    bad("app.example.com/callback", "confidential", /absolute/);
    bad("//app.example.com/callback", "public", /absolute/);
  });

  it("refuses fragments, even an empty one (RFC 6749 §3.1.2)", () => {
    bad("https://app.example.com/cb#section", "confidential", /fragment/);
    bad("https://app.example.com/cb#", "confidential", /fragment/);
  });

  it("refuses forms that read as another URI than they match: backslashes, an empty authority, hidden characters", () => {
    bad("https:\\\\evil.example\\cb", "confidential", /backslash/);
    bad("https:///cb", "confidential", /host right after the scheme/);
    bad("http:///127.0.0.1/cb", "public", /host right after the scheme/);
    bad("https://exa\u200bmple.com/cb", "confidential", /zero-width/);
    bad("https://example.com/c\u202eb", "public", /bidi/);
    // Nothing hidden belongs in a URI, not even what a name keeps (joiners, selectors).
    bad("https://a.example/\u0627\u200c\u0628", "confidential", /zero-width/);
    bad("https://a.example/\u{1F469}\u200d\u{1F4BB}", "confidential", /zero-width/);
    bad("https://a.example/\u034fcb", "confidential", /zero-width/);
    bad("https://a.example\u2215cb", "confidential", /host in ASCII/);
  });

  it("refuses wildcards: redirect URIs match exactly (RFC 9700 §4.1.3, OAuth 2.1 §4.1.1)", () => {
    bad("https://*.example.com/cb", "confidential", /wildcard/);
    bad("https://app.example.com/*", "public", /wildcard/);
  });

  it("refuses plain http on anything but a loopback IP literal (RFC 9700 §2.6)", () => {
    bad("http://app.example.com/cb", "confidential", /https/);
    bad("http://app.example.com/cb", "public", /https/);
    bad("http://10.0.0.5/cb", "public", /https/);
  });

  it("accepts http on 127.0.0.1 and [::1], with or without a port, for any app (RFC 8252 §7.3)", () => {
    ok("http://127.0.0.1/callback", "public");
    ok("http://127.0.0.1:8976/callback", "confidential");
    ok("http://[::1]:4000/cb", "public");
    ok("http://[::1]/cb", "confidential");
  });

  it("refuses http://localhost and suggests 127.0.0.1 (RFC 8252 §8.3)", () => {
    bad("http://localhost:3000/callback", "public", /localhost.*127\.0\.0\.1/);
    bad("http://LOCALHOST/cb", "confidential", /127\.0\.0\.1/);
    bad("http://app.localhost/cb", "public", /127\.0\.0\.1/);
  });

  it("accepts private-use schemes in reverse-domain form for public apps only (RFC 8252 §7.1)", () => {
    ok("com.example.app:/callback", "public");
    ok("com.example.app:/oauth2redirect/aas", "public");
    bad("com.example.app:/callback", "confidential", /confidential/);
    bad("myapp://callback", "public", /reverse-domain/);
    bad("javascript:alert(1)", "public", /reverse-domain/);
    bad("data:text/html,hi", "public", /reverse-domain/);
  });

  it("refuses credentials in the URI and whitespace", () => {
    bad("https://user:pass@app.example.com/cb", "confidential", /user name/);
    bad("https://app.example.com/a b", "confidential", /spaces/);
  });

  it("requires one to ten URIs, trims them and drops duplicates", () => {
    expect(assertValidRedirectUris([" https://a.example.com/cb ", "https://a.example.com/cb", ""], "public")).toEqual([
      "https://a.example.com/cb",
    ]);
    expect(() => assertValidRedirectUris([], "public")).toThrow(/at least one/);
    expect(() => assertValidRedirectUris(["  "], "public")).toThrow(/at least one/);
    const eleven = Array.from({ length: 11 }, (_, i) => `https://a.example.com/cb${i}`);
    expect(() => assertValidRedirectUris(eleven, "public")).toThrow(/at most 10/);
  });

  it("names each bad entry as its own field", () => {
    let err: unknown;
    try {
      assertValidRedirectUris(["https://ok.example.com/cb", "http://localhost/cb", "https://x.example.com/#f"], "confidential");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("invalid_request");
    expect((err as ApiError).errors?.map((e) => e.field)).toEqual(["redirect_uris.1", "redirect_uris.2"]);
  });

  it("requires logo and homepage URLs to be https (or http on a loopback IP)", () => {
    expect(pageUrlProblem("https://example.com/logo.png")).toBeNull();
    expect(pageUrlProblem("http://127.0.0.1:8976/logo.png")).toBeNull();
    expect(pageUrlProblem("http://example.com/logo.png")).toMatch(/https/);
    expect(pageUrlProblem("javascript:alert(1)")).toMatch(/https/);
    expect(pageUrlProblem("logo.png")).toMatch(/absolute/);
    expect(RegisterAppInput.safeParse({ ...confidential(), logo_url: "http://example.com/x.png" }).success).toBe(false);
    expect(RegisterAppInput.parse({ ...confidential(), homepage_url: "" }).homepage_url).toBeNull();
  });
});

describe("POST /api/console/apps: a redirect URI over 2,000 characters", () => {
  it("is refused naming which URI, in words, not zod's 'Too big: expected string to have <=2000 characters'", async () => {
    const dev = await api.person();
    const long = `https://log.example.com/cb?${"a".repeat(3000)}`;
    const res = await fetch(`${api.url}/api/console/apps`, {
      method: "POST",
      headers: { cookie: await sessionCookieFor(dev.id), origin: api.url, "content-type": "application/json" },
      body: JSON.stringify({ name: "Training Log", kind: "confidential", redirect_uris: ["https://log.example.com/callback", long] }),
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.errors).toEqual([
      { field: "redirect_uris.1", code: "invalid_request", detail: "redirect URI 2 (https://log.example.com/cb?aaaaaaaaaaaaa…) is longer than 2000 characters" },
    ]);
    expect(body.detail).not.toMatch(/Too big|expected string/);
  });
});

describe("client ids", () => {
  it("are the name's slug and six random characters, URL-safe", () => {
    expect(slugify("Demo Training Log")).toBe("demo-training-log");
    expect(slugify("Ålesund Løp & Sykkel!")).toBe("alesund-lop-sykkel");
    expect(slugify("日本語")).toBe("app");
    expect(slugify("A very long application name that keeps going and going").length).toBeLessThanOrEqual(32);
    const id = newClientId("My Coach App");
    expect(id).toMatch(/^my-coach-app-[a-z0-9]{6}$/);
    expect(new Set(Array.from({ length: 200 }, () => newClientId("x"))).size).toBe(200);
  });
});

describe("registerApp", () => {
  it("gives a confidential app a client secret, shown once and stored only as its SHA-256", async () => {
    const dev = await api.person();
    const { app, client_secret } = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: confidential() }));
    expect(app).toMatchObject({
      name: "Training Log",
      kind: "confidential",
      redirect_uris: ["https://log.example.com/callback"],
      logo_url: null,
      homepage_url: null,
      connected_athletes: 0,
    });
    expect(app.client_id).toMatch(/^training-log-[a-z0-9]{6}$/);
    expect(client_secret).toMatch(/^aas_cs_/);
    expect(isWellFormedToken(client_secret!, "clientSecret")).toBe(true);
    expect(await storedHash(app.client_id)).toBe(sha256Hex(client_secret!));

    // Nothing that reads the app afterwards carries the secret or its hash.
    const listed = JSON.stringify(await listMyApps(await api.as(dev.id)));
    const got = JSON.stringify(await getMyApp({ ...(await api.as(dev.id)), clientId: app.client_id }));
    for (const text of [listed, got]) {
      expect(text).not.toContain(client_secret);
      expect(text).not.toContain(sha256Hex(client_secret!));
      expect(text).not.toContain("secret");
    }
  });

  it("gives a public app no secret; a native app may use a private-use scheme", async () => {
    const dev = await api.person();
    const { app, client_secret } = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: RegisterAppInput.parse({
        name: "Pocket Coach",
        kind: "public",
        redirect_uris: ["com.example.pocketcoach:/callback", "http://127.0.0.1/callback"],
        logo_url: "https://example.com/logo.png",
        homepage_url: "https://example.com",
      }) }));
    expect(client_secret).toBeNull();
    expect(await storedHash(app.client_id)).toBeNull();
    expect(app).toMatchObject({ kind: "public", logo_url: "https://example.com/logo.png", homepage_url: "https://example.com" });
  });

  it("refuses invalid redirect URIs and registers nothing", async () => {
    const dev = await api.person();
    const before = await countRows(oauthClients);
    const err = await refusal(
      inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: confidential({ redirect_uris: ["com.example.app:/cb"] }) })),
    );
    expect(err.code).toBe("invalid_request");
    expect(err.errors).toEqual([expect.objectContaining({ field: "redirect_uris.0" })]);
    expect(await countRows(oauthClients)).toBe(before);
  });

  it("gives two apps of the same name different client ids", async () => {
    const dev = await api.person();
    const a = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: confidential() }));
    const b = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: confidential() }));
    expect(a.app.client_id).not.toBe(b.app.client_id);
    expect(a.client_secret).not.toBe(b.client_secret);
  });
});

describe("only the owner", () => {
  it("lists, reads, changes, rotates or deletes an app; anyone else gets not_found", async () => {
    const dev = await api.person();
    const other = await api.person();
    const { app } = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: confidential() }));
    expect((await listMyApps(await api.as(dev.id))).map((a) => a.client_id)).toContain(app.client_id);
    expect(await listMyApps(await api.as(other.id))).toEqual([]);

    const clientId = app.client_id;
    const ctx = await api.as(other.id);
    for (const attempt of [
      () => getMyApp({ ...ctx, clientId }),
      () => inWriteCtx(ctx.ctx, (ctx) => updateApp({ ctx, clientId, input: { name: "Mine now" } })),
      () => inWriteCtx(ctx.ctx, (ctx) => rotateClientSecret({ ctx, clientId })),
      () => inWriteCtx(ctx.ctx, (ctx) => deleteApp({ ctx, clientId })),
    ]) {
      expect((await refusal(attempt())).code).toBe("not_found");
    }
    // An unknown id reads the same as someone else's.
    expect((await refusal(getMyApp({ ...(await api.as(dev.id)), clientId: "no-such-app" }))).message).toBe(
      "You have no app with client_id no-such-app.",
    );
    expect(await getMyApp({ ...(await api.as(dev.id)), clientId })).toMatchObject({ name: "Training Log" });
  });

  it("refuses a client-credentials actor", async () => {
    const db = await api.db();
    const err = await refusal(listMyApps({ ctx: { db, actor: { kind: "app", clientId: "x" } } }));
    expect(err.code).toBe("client_credentials_not_allowed");
  });
});

describe("updateApp", () => {
  it("changes the members sent, checks redirect URIs against the app's kind and keeps the client id", async () => {
    const dev = await api.person();
    const { app } = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: confidential({ logo_url: "https://example.com/l.png" }) }));
    const updated = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => updateApp({ ctx, clientId: app.client_id, input: UpdateAppInput.parse({ name: "Renamed", redirect_uris: ["https://a.example.com/cb", "http://127.0.0.1:9000/cb"] }) }));
    expect(updated).toMatchObject({
      client_id: app.client_id,
      name: "Renamed",
      redirect_uris: ["https://a.example.com/cb", "http://127.0.0.1:9000/cb"],
      logo_url: "https://example.com/l.png",
    });

    const cleared = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => updateApp({ ctx, clientId: app.client_id, input: UpdateAppInput.parse({ logo_url: "" }) }));
    expect(cleared.logo_url).toBeNull();

    const err = await refusal(
      inWriteCtx((await api.as(dev.id)).ctx, (ctx) => updateApp({ ctx, clientId: app.client_id, input: { redirect_uris: ["com.example.app:/cb"] } })),
    );
    expect(err.errors?.[0]).toMatchObject({ field: "redirect_uris.0", detail: expect.stringContaining("confidential") });
    expect((await getMyApp({ ...(await api.as(dev.id)), clientId: app.client_id })).redirect_uris).toEqual(updated.redirect_uris);
  });

  it("keeps a redirect URI already registered when the list is sent back whole, and checks only the new ones", async () => {
    const dev = await api.person();
    const { app } = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: confidential() }));
    // Registered under other rules, as the demo app's {BASE_URL}/demo/callback is on http://localhost.
    const legacy = "http://localhost:3000/demo/callback";
    await (await api.db()).update(oauthClients).set({ redirectUris: [legacy] }).where(eq(oauthClients.clientId, app.client_id));
    const update = async (redirect_uris: string[]) =>
      inWriteCtx((await api.as(dev.id)).ctx, (ctx) => updateApp({ ctx, clientId: app.client_id, input: UpdateAppInput.parse({ redirect_uris }) }));
    expect((await update([legacy, "https://b.example.com/cb"])).redirect_uris).toEqual([legacy, "https://b.example.com/cb"]);
    const err = await refusal(update([legacy, "http://localhost:4000/cb"]));
    expect(err.errors).toEqual([expect.objectContaining({ field: "redirect_uris.1", detail: expect.stringContaining("localhost") })]);
  });

  it("refuses an attempt to change the kind", () => {
    expect(UpdateAppInput.safeParse({ kind: "public" }).success).toBe(false);
  });
});

describe("rotateClientSecret", () => {
  it("shows a new secret once; the old one stops matching at once", async () => {
    const dev = await api.person();
    const { app, client_secret: first } = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: confidential() }));
    const rotated = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => rotateClientSecret({ ctx, clientId: app.client_id }));
    expect(rotated.client_secret).toMatch(/^aas_cs_/);
    expect(rotated.client_secret).not.toBe(first);
    const hash = await storedHash(app.client_id);
    expect(hash).toBe(sha256Hex(rotated.client_secret!));
    expect(hash).not.toBe(sha256Hex(first!));
    expect(rotated.app.client_id).toBe(app.client_id);
  });

  it("refuses a public app, which has no secret", async () => {
    const dev = await api.person();
    const { app } = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: RegisterAppInput.parse({ name: "Mobile", kind: "public", redirect_uris: ["http://127.0.0.1/cb"] }) }));
    expect((await refusal(inWriteCtx((await api.as(dev.id)).ctx, (ctx) => rotateClientSecret({ ctx, clientId: app.client_id })))).code).toBe("conflict");
    expect(await storedHash(app.client_id)).toBeNull();
  });
});

describe("deleteApp", () => {
  it("removes the app with every grant, token family, code and refresh token issued to it", async () => {
    const dev = await api.person();
    const athlete = await api.person();
    const db = await api.db();
    const { app } = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: confidential() }));
    const { app: kept } = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: confidential({ name: "Kept" }) }));

    for (const clientId of [app.client_id, kept.client_id]) {
      const grantId = `grt_${clientId}`;
      const familyId = `fam_${clientId}`;
      await db.insert(oauthGrants).values({ id: grantId, clientId, userId: athlete.id, scopes: ["athlete.read"] });
      await db.insert(oauthTokenFamilies).values({ id: familyId, grantId, scopes: ["athlete.read"] });
      await db.insert(oauthRefreshTokens).values({ tokenHash: sha256Hex(`rt-${clientId}`), familyId, expiresAt: new Date(Date.now() + 86_400_000) });
      await db.insert(oauthCodes).values({
        codeHash: sha256Hex(`code-${clientId}`),
        clientId,
        grantId,
        redirectUri: "https://log.example.com/callback",
        scopes: ["athlete.read"],
        codeChallenge: "x".repeat(43),
        expiresAt: new Date(Date.now() + 60_000),
      });
    }
    await consumeRateLimit(db, `app:${app.client_id}`);
    expect((await getMyApp({ ...(await api.as(dev.id)), clientId: app.client_id })).connected_athletes).toBe(1);

    expect(await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => deleteApp({ ctx, clientId: app.client_id }))).toEqual({ client_id: app.client_id, deleted: true });

    expect(await countRows(oauthClients, eq(oauthClients.clientId, app.client_id))).toBe(0);
    expect(await countRows(oauthGrants, eq(oauthGrants.clientId, app.client_id))).toBe(0);
    expect(await countRows(oauthTokenFamilies, eq(oauthTokenFamilies.id, `fam_${app.client_id}`))).toBe(0);
    expect(await countRows(oauthRefreshTokens, eq(oauthRefreshTokens.familyId, `fam_${app.client_id}`))).toBe(0);
    expect(await countRows(oauthCodes, eq(oauthCodes.clientId, app.client_id))).toBe(0);
    expect(await countRows(rateLimitCounters, like(rateLimitCounters.bucket, `app:${app.client_id}:%`))).toBe(0);

    // The other app and what was issued to it are untouched.
    expect(await countRows(oauthGrants, eq(oauthGrants.clientId, kept.client_id))).toBe(1);
    expect(await countRows(oauthRefreshTokens, eq(oauthRefreshTokens.familyId, `fam_${kept.client_id}`))).toBe(1);

    expect((await refusal(inWriteCtx((await api.as(dev.id)).ctx, (ctx) => deleteApp({ ctx, clientId: app.client_id })))).code).toBe("not_found");
  });
});

describe("client credentials at the token endpoint", () => {
  const clientCredentials = (clientId: string, secret: string) =>
    fetch(`${api.url}/oauth/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ grant_type: "client_credentials" }),
    });

  it("accept the secret shown at registration; after rotation only the new one", async () => {
    const dev = await api.person();
    const { app, client_secret: first } = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => registerApp({ ctx, input: confidential() }));
    expect((await clientCredentials(app.client_id, first!)).status).toBe(200);

    const { client_secret: second } = await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => rotateClientSecret({ ctx, clientId: app.client_id }));
    const old = await clientCredentials(app.client_id, first!);
    expect(old.status).toBe(401);
    expect(await old.json()).toMatchObject({ error: "invalid_client" });
    const fresh = await clientCredentials(app.client_id, second!);
    expect(fresh.status).toBe(200);
    const { access_token } = (await fresh.json()) as { access_token: string };
    expect((await api.call(access_token, "GET", "/v1/app/usage")).status).toBe(200);

    // Deleting the app ends the tokens issued to it on their next request.
    await inWriteCtx((await api.as(dev.id)).ctx, (ctx) => deleteApp({ ctx, clientId: app.client_id }));
    const after = await api.call(access_token, "GET", "/v1/app/usage");
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ code: "token_revoked" });
    expect((await clientCredentials(app.client_id, second!)).status).toBe(401);
  });
});
