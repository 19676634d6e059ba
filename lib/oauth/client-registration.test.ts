import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { decodeJwt } from "jose";
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { oauthClients, oauthGrants } from "../db/schema";
import { resetEnvForTests } from "../env";
import { newId } from "../ids";
import { awayFromWindowEdge } from "../testing/clock";
import { setupApi } from "../testing/fixtures";
import { decideAuthorization, prepareAuthorization, type AuthorizationStep } from "./authorize";
import { METADATA_FETCHES_PER_HOUR, metadataTtlS, REFUSED_DOCUMENT_TTL_MS } from "./client-metadata";
import { checkRegistration, REGISTRATIONS_PER_HOUR } from "./register";
import { OAuthError } from "./errors";

// Clients the service has never seen (CONTRACT §12): metadata documents served by a loopback
// server (private networks allowed here, as on a machine of one's own), every way one can be
// wrong, caching, and Dynamic Client Registration over HTTP.

process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
resetEnvForTests();
const api = setupApi();
let db: Db;
let server: http.Server;
let base = "";
const hits = new Map<string, number>();
const REDIRECT = "http://127.0.0.1:47123/callback";
const CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

function doc(path: string, over: Record<string, unknown> = {}) {
  return JSON.stringify({ client_id: `${base}${path}`, client_name: "Pocket Coach", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", ...over });
}

beforeAll(async () => {
  db = await api.db();
  server = http.createServer((req, res) => {
    const path = req.url ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const json = (body: string, headers: Record<string, string> = {}) => res.writeHead(200, { "content-type": "application/json", ...headers }).end(body);
    if (path === "/ok.json" || path === "/other.json" || path === "/lonely.json") return json(doc(path), { "cache-control": "max-age=600" });
    if (path === "/wrong-id.json") return json(doc(path, { client_id: `${base}/someone-else.json` }));
    if (path === "/confidential.json") return json(doc(path, { token_endpoint_auth_method: "client_secret_basic" }));
    if (path === "/large.json") return json(doc(path, { padding: "x".repeat(6000) }));
    if (path === "/redirect.json") return res.writeHead(302, { location: `${base}/ok.json` }).end();
    if (path === "/not-json.json") return json("<html>hello</html>");
    if (path === "/no-name.json") return json(doc(path, { client_name: "" }));
    if (path === "/nul-name.json") return json(doc(path, { client_name: "Pocket\u0000Coach" }));
    if (path === "/bidi-name.json") return json(doc(path, { client_name: "Pocket Coach\u202e ,ia.edualc morf" }));
    if (path === "/surrogate-name.json") return json(doc(path, { client_name: "Pocket \ud800Coach" }));
    if (path === "/nul-redirect.json") return json(doc(path, { redirect_uris: [REDIRECT, `${REDIRECT}\u0000`] }));
    if (path === "/surrogate-redirect.json") return json(doc(path, { redirect_uris: [`${REDIRECT}\ud800`] }));
    if (path === "/nul-logo.json") return json(doc(path, { logo_uri: "https://pocket.example/logo\u0000.png" }));
    if (path === "/surrogate-client-uri.json") return json(doc(path, { client_uri: "https://pocket.example/\udc00" }));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  delete process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS;
  resetEnvForTests();
});

function params(clientId: string, over: Record<string, string> = {}) {
  return {
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "athlete.read activities.read",
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
    state: "s",
    resource: `${api.url}/mcp`,
    ...over,
  };
}

function expectErrorPage(step: AuthorizationStep, words: RegExp) {
  expect(step.kind).toBe("error_page");
  expect((step as { message: string }).message).toMatch(words);
}

describe("client metadata documents", () => {
  it("name a client the athlete is asked about, with its host and as not reviewed", async () => {
    const person = await api.person();
    const step = await prepareAuthorization(db, params(`${base}/ok.json`), [], person.id);
    expect(step.kind).toBe("consent");
    expect((step as { request: { client: unknown; resource: string } }).request).toMatchObject({
      client: { name: "Pocket Coach", kind: "public", unreviewedFrom: new URL(base).host },
      resource: "mcp",
    });
  });

  it("that cannot be used show an error page and never redirect", async () => {
    const person = await api.person();
    const cases: [string, RegExp, Record<string, string>?][] = [
      [`http://127.0.0.1:9/client.json`, /could not be fetched: its server refused the connection/],
      [`${base}/wrong-id.json`, /client_id is not the address it was fetched from/],
      [`${base}/confidential.json`, /only public clients/],
      [`${base}/large.json`, /larger than 5 KiB/],
      [`${base}/redirect.json`, /redirect \(HTTP 302\); redirects are not followed/],
      [`${base}/not-json.json`, /not JSON/],
      [`${base}/no-name.json`, /no client_name/],
      // A right-to-left override turned the consent screen's own ", from <host>" around.
      [`${base}/bidi-name.json`, /its client_name holds control, format \(bidi or zero-width\)/],
      [`${base}/missing.json`, /answered HTTP 404/],
      [`${base}/ok.json`, /redirect_uri is not registered/, { redirect_uri: "https://elsewhere.example/callback" }],
    ];
    for (const [url, words, over] of cases) {
      const step = await prepareAuthorization(db, params(url, over), [], person.id);
      expectErrorPage(step, words);
      expectErrorPage(await decideAuthorization(db, params(url, over), person.id, "allow"), words);
    }
  });

  it("holding a NUL or a lone surrogate in a member the service keeps show an error page naming it, and are not stored", async () => {
    const person = await api.person();
    const cases: [string, string][] = [
      ["/nul-name.json", "client_name"],
      ["/surrogate-name.json", "client_name"],
      ["/nul-redirect.json", "redirect_uris.1"],
      ["/surrogate-redirect.json", "redirect_uris.0"],
      ["/nul-logo.json", "logo_uri"],
      ["/surrogate-client-uri.json", "client_uri"],
    ];
    for (const [path, member] of cases) {
      const url = `${base}${path}`;
      const words = new RegExp(`cannot be used: its ${member} holds a NUL character or text that is not valid Unicode`);
      expectErrorPage(await prepareAuthorization(db, params(url), [], person.id), words);
      expectErrorPage(await decideAuthorization(db, params(url), person.id, "allow"), words);
      expect(await db.select().from(oauthClients).where(eq(oauthClients.clientId, url)), path).toEqual([]);
    }
  });

  it("at a private address are refused where private networks are not allowed", async () => {
    process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "false";
    resetEnvForTests();
    try {
      const person = await api.person();
      // An https URL on a loopback name: a metadata document URL, but its address is not public.
      const step = await prepareAuthorization(db, params("https://localhost:9/client.json"), [], person.id);
      expectErrorPage(step, /localhost resolves only to non-public addresses/);
      // An http URL is not a metadata document at all here: an unknown client.
      expectErrorPage(await prepareAuthorization(db, params(`${base}/never-stored.json`), [], person.id), /not registered here/);
    } finally {
      process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
      resetEnvForTests();
    }
  });

  it("at a cloud's metadata address are refused even where private networks are allowed, saying so", async () => {
    const person = await api.person();
    const step = await prepareAuthorization(db, params("https://169.254.169.254/client.json"), [], person.id);
    expectErrorPage(step, /169\.254\.169\.254 is a link-local or cloud metadata address/);
  });

  it("are fetched once while fresh: a whole authorization and a second one cost no request; an expired one is fetched again", async () => {
    const url = `${base}/ok.json`;
    const person = await api.person();
    await prepareAuthorization(db, params(url), [], person.id);
    const before = hits.get("/ok.json") ?? 0;
    await prepareAuthorization(db, params(url), [], person.id);
    const allowed = await decideAuthorization(db, params(url), person.id, "allow");
    expect(allowed.kind).toBe("redirect");
    expect(hits.get("/ok.json")).toBe(before);
    await db.update(oauthClients).set({ metadataExpiresAt: new Date(Date.now() - 1000) }).where(eq(oauthClients.clientId, url));
    await prepareAuthorization(db, params(url), [], person.id);
    expect(hits.get("/ok.json")).toBe(before + 1);
    const [row] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, url));
    // max-age=600 within the 5 min–24 h bounds.
    expect(row!.metadataExpiresAt!.getTime() - row!.metadataFetchedAt!.getTime()).toBe(600_000);
  });

  it("that cannot be used are fetched once for authorizations that come together, and not again for a while after", async () => {
    const person = await api.person();
    const url = `${base}/gone.json`;
    const steps = await Promise.all(Array.from({ length: 20 }, () => prepareAuthorization(db, params(url), [], person.id)));
    for (const step of steps) expectErrorPage(step, /answered HTTP 404/);
    expectErrorPage(await prepareAuthorization(db, params(url), [], person.id), /answered HTTP 404/);
    expect(hits.get("/gone.json")).toBe(1);
    // Once the refusal has stood its time, the document is asked for again.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + REFUSED_DOCUMENT_TTL_MS + 1000 });
    try {
      expectErrorPage(await prepareAuthorization(db, params(url), [], person.id), /answered HTTP 404/);
    } finally {
      vi.useRealTimers();
    }
    expect(hits.get("/gone.json")).toBe(2);
  });

  it("that no athlete authorized within a day are removed when another is read (it is read again if used)", async () => {
    const person = await api.person();
    const url = `${base}/lonely.json`;
    await prepareAuthorization(db, params(url), [], person.id);
    await db.update(oauthClients).set({ createdAt: new Date(Date.now() - 2 * 86_400_000) }).where(eq(oauthClients.clientId, url));
    expect((await prepareAuthorization(db, params(`${base}/other.json`), [], person.id)).kind).toBe("consent");
    expect(await db.select().from(oauthClients).where(eq(oauthClients.clientId, url))).toEqual([]);
    expect((await prepareAuthorization(db, params(url), [], person.id)).kind).toBe("consent");
  });

  it(`are fetched at most ${METADATA_FETCHES_PER_HOUR} times an hour for one person: past that the page says so and nothing is fetched; others are not held back`, async () => {
    await awayFromWindowEdge(3_600_000, 60_000);
    const person = await api.person();
    for (let i = 0; i < METADATA_FETCHES_PER_HOUR; i++) {
      expectErrorPage(await prepareAuthorization(db, params(`${base}/many-${i}.json`), [], person.id), /answered HTTP 404/);
    }
    expect(hits.get(`/many-${METADATA_FETCHES_PER_HOUR - 1}.json`)).toBe(1);
    // What the service already knows costs nothing: a refusal that still stands is shown again, unfetched.
    expectErrorPage(await prepareAuthorization(db, params(`${base}/many-0.json`), [], person.id), /answered HTTP 404/);
    expect(hits.get("/many-0.json")).toBe(1);
    const over = `/many-${METADATA_FETCHES_PER_HOUR}.json`;
    expectErrorPage(await prepareAuthorization(db, params(`${base}${over}`), [], person.id), new RegExp(`fetched ${METADATA_FETCHES_PER_HOUR} apps' documents for you within the hour.*try again in \\d+ minutes?`));
    expect(hits.get(over) ?? 0).toBe(0);
    const other = await api.person();
    expectErrorPage(await prepareAuthorization(db, params(`${base}${over}`), [], other.id), /answered HTTP 404/);
    expect(hits.get(over)).toBe(1);
  });

  it("are fetched only for a signed-in athlete: a link opened by anyone fetches nothing", async () => {
    const { authorizationStep } = await import("./authorize");
    const before = hits.get("/ok.json") ?? 0;
    await db.update(oauthClients).set({ metadataExpiresAt: new Date(Date.now() - 1000) }).where(eq(oauthClients.clientId, `${base}/ok.json`));
    expect((await authorizationStep(db, params(`${base}/ok.json`), [], null)).kind).toBe("sign_in");
    expect(hits.get("/ok.json") ?? 0).toBe(before);
  });

  it("keep what their caching headers allow, within 5 minutes and 24 hours", () => {
    expect(metadataTtlS("max-age=600", null)).toBe(600);
    expect(metadataTtlS("public, max-age=31536000", null)).toBe(86_400);
    expect(metadataTtlS("no-store", null)).toBe(300);
    expect(metadataTtlS("max-age=10", null)).toBe(300);
    expect(metadataTtlS(null, new Date(Date.now() + 7_200_000).toUTCString())).toBeGreaterThan(7_100);
    expect(metadataTtlS(null, null)).toBe(3_600);
  });
});

let registrations = 0;
async function register(body: unknown) {
  registrations++;
  return fetch(`${api.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

describe("dynamic client registration (RFC 7591)", () => {
  // Registrations are counted per address in clock hours, and the tests below share one count up
  // to the refusal: begin them well inside an hour.
  beforeAll(() => awayFromWindowEdge(3_600_000, 60_000), 70_000);

  it("registers a public client and answers 201 with every member, then the client can be authorized for /mcp", async () => {
    const res = await register({ client_name: "Desk Assistant", redirect_uris: ["http://localhost/callback"], grant_types: ["authorization_code", "refresh_token"] });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      client_name: "Desk Assistant",
      redirect_uris: ["http://localhost/callback"],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    });
    expect(typeof body.client_id).toBe("string");
    expect(Math.abs((body.client_id_issued_at as number) - Date.now() / 1000)).toBeLessThan(60);

    // A loopback redirect on any port, the consent, the code, and a token for /mcp.
    const person = await api.person();
    const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const redirect = "http://localhost:51999/callback";
    const step = await decideAuthorization(db, params(body.client_id as string, { redirect_uri: redirect }), person.id, "allow");
    expect(step.kind).toBe("redirect");
    const code = new URL((step as { url: string }).url).searchParams.get("code")!;
    const token = await fetch(`${api.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", client_id: body.client_id as string, code, code_verifier: verifier, redirect_uri: redirect }),
    });
    expect(token.status, await token.clone().text()).toBe(200);
    expect(decodeJwt(((await token.json()) as { access_token: string }).access_token).aud).toBe(`${api.url}/mcp`);
    const prepared = await prepareAuthorization(db, params(body.client_id as string, { redirect_uri: redirect }), [], person.id);
    expect((prepared as { request: { client: { unreviewedFrom: string } } }).request.client.unreviewedFrom).toBe("localhost");
  });

  it("refuses confidential clients and redirect URIs that are not https or loopback, in RFC 7591's words", async () => {
    const secret = await register({ client_name: "X", redirect_uris: ["https://x.example/cb"], token_endpoint_auth_method: "client_secret_basic" });
    expect(secret.status).toBe(400);
    expect(await secret.json()).toMatchObject({ error: "invalid_client_metadata" });
    for (const uris of [undefined, [], ["http://example.com/cb"], ["javascript:alert(1)"]]) {
      const res = await register({ client_name: "X", redirect_uris: uris });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_redirect_uri");
    }
    // An https URI with a fragment is refused for the fragment (RFC 6749 §3.1.2), and says so.
    const fragment = await register({ client_name: "X", redirect_uris: ["https://x.example/cb#done"] });
    expect(await fragment.json()).toMatchObject({ error: "invalid_redirect_uri", error_description: expect.stringMatching(/has a fragment/) });
    // Where the athlete is sent back must read as the host it is: no user@host (over HTTP once;
    // the rest through the check itself, as registrations an hour are counted).
    const userinfo = await register({ client_name: "X", redirect_uris: ["https://claude.ai@evil.example/cb"] });
    expect(await userinfo.json()).toMatchObject({ error: "invalid_redirect_uri", error_description: expect.stringMatching(/user name or password/) });
    const refusal = (body: unknown) => {
      try {
        checkRegistration(body);
        return null;
      } catch (err) {
        return err instanceof OAuthError ? { error: err.error, description: err.description } : err;
      }
    };
    expect(refusal({ client_name: "X", redirect_uris: ["https://*.example.com/cb"] })).toMatchObject({ error: "invalid_redirect_uri", description: expect.stringMatching(/a \* in its host/) });
    // Nor one that reads as another than it is: spaces, a newline, a backslash, no // before the host, a host in other letters, a hidden character.
    for (const uri of [" https://x.example/cb", "https://x.example/c\nb", "https:\\\\x.example\\cb", "https:x.example/cb", "https://x\uFF0Eexample/cb", "https://x.example/\u200Bcb"]) {
      expect(refusal({ client_name: "X", redirect_uris: [uri] }), JSON.stringify(uri)).toMatchObject({ error: "invalid_redirect_uri" });
    }
    // Nor a name whose characters turn around or hide the words shown beside it.
    for (const name of ["Claude\u202e ,ia.edualc morf", "Clau\u200bde", "Desk\u2066Assistant"]) {
      expect(refusal({ client_name: name, redirect_uris: ["https://x.example/cb"] }), JSON.stringify(name)).toMatchObject({
        error: "invalid_client_metadata",
        description: expect.stringMatching(/^client_name holds control, format/),
      });
    }
    expect(refusal({ client_name: "Coach Ångström – 東京", redirect_uris: ["https://x.example/cb"] })).toBeNull();
    const credentials = await register({ redirect_uris: ["https://x.example/cb"], grant_types: ["client_credentials"] });
    expect(((await credentials.json()) as { error: string }).error).toBe("invalid_client_metadata");
  });

  it("refuses a NUL or a lone surrogate in any member it keeps, naming it: invalid_redirect_uri in a redirect URI, invalid_client_metadata elsewhere", async () => {
    const ok = { client_name: "Desk Assistant", redirect_uris: ["https://desk.example/cb"] };
    const cases: [Record<string, unknown>, "invalid_client_metadata" | "invalid_redirect_uri", string][] = [
      [{ ...ok, client_name: "Desk\u0000Assistant" }, "invalid_client_metadata", "client_name"],
      [{ ...ok, client_name: "Desk \ud800Assistant" }, "invalid_client_metadata", "client_name"],
      [{ ...ok, client_uri: "https://desk.example/\u0000" }, "invalid_client_metadata", "client_uri"],
      [{ ...ok, logo_uri: "https://desk.example/logo\udc00.png" }, "invalid_client_metadata", "logo_uri"],
      [{ ...ok, redirect_uris: ["https://desk.example/cb", "https://desk.example/cb\u0000"] }, "invalid_redirect_uri", "redirect_uris.1"],
      [{ ...ok, redirect_uris: ["http://localhost/cb\ud800"] }, "invalid_redirect_uri", "redirect_uris.0"],
    ];
    for (const [body, error, member] of cases) {
      const res = await register(body);
      const answer = (await res.json()) as { error: string; error_description: string };
      expect({ status: res.status, error: answer.error }, member).toEqual({ status: 400, error });
      expect(answer.error_description).toContain(member);
    }
    // A member the service does not keep is ignored (RFC 7591 §2), whatever it holds.
    expect((await register({ ...ok, software_id: "desk\u0000" })).status).toBe(201);
  });

  it("prunes registrations no athlete authorized within a day, and keeps those in use", async () => {
    const old = new Date(Date.now() - 2 * 86_400_000);
    const unused = `dcr_old_${newId("grt")}`;
    const used = `dcr_used_${newId("grt")}`;
    for (const clientId of [unused, used]) {
      await db.insert(oauthClients).values({ clientId, name: "Old", kind: "public", redirectUris: ["http://localhost/cb"], registration: "dynamic", createdAt: old });
    }
    const person = await api.person();
    await db.insert(oauthGrants).values({ id: newId("grt"), clientId: used, userId: person.id, scopes: ["athlete.read"] });
    expect((await register({ redirect_uris: ["http://localhost/cb"] })).status).toBe(201);
    const left = (await db.select({ id: oauthClients.clientId }).from(oauthClients)).map((r) => r.id);
    expect(left).toContain(used);
    expect(left).not.toContain(unused);
  });

  it(`takes at most ${REGISTRATIONS_PER_HOUR} registrations an hour from one address, refused ones included: then 429 with Retry-After`, async () => {
    while (registrations < REGISTRATIONS_PER_HOUR - 1) expect((await register({ redirect_uris: ["https://x.example/cb"] })).status).toBe(201);
    expect((await register({ redirect_uris: ["http://example.com/refused"] })).status).toBe(400);
    const over = await register({ redirect_uris: ["https://x.example/cb"] });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await over.json()).toMatchObject({ error: "slow_down" });
  });

  it("is advertised with metadata documents in the authorization server's metadata", async () => {
    const meta = (await (await fetch(`${api.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({ registration_endpoint: `${api.url}/oauth/register`, client_id_metadata_document_supported: true });
  });
});
