import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { and, eq, isNull } from "drizzle-orm";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Db } from "../db/client";
import { oauthGrants } from "../db/schema";
import { resetEnvForTests } from "../env";
import { inWriteCtx } from "../http/operation";
import { decideAuthorization, prepareAuthorization } from "../oauth/authorize";
import { disconnectApp } from "../oauth-grants/disconnect-app";
import { setupApi } from "../testing/fixtures";

// What an assistant does, given only {base_url}/mcp, with the SDK's own client and its OAuth
// support: a 401 names the resource metadata, that names the authorization server, the client
// identifies itself by a Client ID Metadata Document (served here over HTTPS from a loopback
// server whose self-signed certificate this process trusts), sends the athlete through PKCE and
// consent, and calls tools. The athlete's side of /oauth/authorize is what the consent page does:
// prepareAuthorization (what the page shows) and decideAuthorization (the Allow button).

process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS = "true";
resetEnvForTests();
const api = setupApi();
let db: Db;

/** A loopback HTTPS server serving one metadata document, counting its requests. */
let docServer: Server;
let docUrl = "";
let docRequests = 0;
const REDIRECT = "http://127.0.0.1:47999/callback";
let certDir = "";
const defaultCAs = tls.getCACertificates("default");

beforeAll(async () => {
  db = await api.db();
  certDir = mkdtempSync(path.join(tmpdir(), "assistant-cert-"));
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
    "-keyout", path.join(certDir, "key.pem"), "-out", path.join(certDir, "cert.pem"),
  ], { stdio: "ignore" });
  const cert = readFileSync(path.join(certDir, "cert.pem"), "utf8");
  // Outbound requests (undici) use the default CA list: this process now trusts the test's certificate too.
  tls.setDefaultCACertificates([...defaultCAs, cert]);
  docServer = createServer({ key: readFileSync(path.join(certDir, "key.pem")), cert }, (req, res) => {
    docRequests++;
    res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=3600" });
    res.end(JSON.stringify({
      client_id: docUrl,
      client_name: "Pocket Coach",
      client_uri: "https://localhost/",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }));
  });
  await new Promise<void>((r) => docServer.listen(0, "127.0.0.1", r));
  docUrl = `https://localhost:${(docServer.address() as AddressInfo).port}/assistant.json`;
});

afterAll(async () => {
  tls.setDefaultCACertificates(defaultCAs);
  await new Promise((r) => docServer?.close(r));
  rmSync(certDir, { recursive: true, force: true });
  delete process.env.WEBHOOKS_ALLOW_PRIVATE_NETWORKS;
  resetEnvForTests();
});

/** The assistant's memory: what the SDK asks a provider to keep. */
class Assistant implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  clientMetadataUrl = docUrl;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "Pocket Coach", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

function transport(provider: Assistant) {
  return new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { authProvider: provider });
}

/** The assistant connects, the athlete consents, the assistant finishes; returns a connected client. */
async function connectAssistant(provider: Assistant, userId: string): Promise<Client> {
  const first = new Client({ name: "pocket-coach", version: "1.0.0" });
  await expect(first.connect(transport(provider))).rejects.toBeInstanceOf(UnauthorizedError);
  const url = provider.authorizationUrl!;
  expect(url.origin + url.pathname).toBe(`${api.url}/oauth/authorize`);
  const params = Object.fromEntries(url.searchParams);
  expect(params).toMatchObject({ client_id: docUrl, resource: `${api.url}/mcp`, code_challenge_method: "S256", redirect_uri: REDIRECT });

  const shown = await prepareAuthorization(db, params, [], userId);
  expect(shown.kind).toBe("consent");
  expect((shown as { request: { client: { name: string; unreviewedFrom: string | null } } }).request.client).toMatchObject({
    name: "Pocket Coach",
    unreviewedFrom: new URL(docUrl).host,
  });

  const allowed = await decideAuthorization(db, params, userId, "allow");
  expect(allowed.kind).toBe("redirect");
  const back = new URL((allowed as { url: string }).url);
  expect(back.origin + back.pathname).toBe(REDIRECT);
  const t = transport(provider);
  await t.finishAuth(back.searchParams.get("code")!);
  expect(decodeJwt(provider.saved!.access_token).aud).toBe(`${api.url}/mcp`);

  const client = new Client({ name: "pocket-coach", version: "1.0.0" });
  await client.connect(transport(provider));
  return client;
}

describe("an assistant given only {base_url}/mcp", () => {
  it("discovers the service from a 401, identifies itself by its metadata document, gets consent and reads the athlete's training", async () => {
    const athlete = await api.person();
    const pat = await api.pat(athlete.id);
    for (const [i, start] of ["2026-10-05T07:00:00", "2026-10-07T07:00:00"].entries()) {
      const res = await api.call(pat, "POST", "/v1/athletes/me/activities", {
        body: { name: `Run ${i}`, sport_type: "run", start_local: start, elapsed_time_s: 3600, moving_time_s: 3500, distance_m: 10_000 },
      });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const before = docRequests;
    const client = await connectAssistant(new Assistant(), athlete.id);
    expect(docRequests - before).toBe(1);

    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(expect.arrayContaining(["get_profile", "list_activities", "get_training_summary"]));
    const listed = await client.callTool({ name: "list_activities", arguments: { limit: 10 } });
    expect(listed.isError).toBeFalsy();
    const v1 = (await (await api.call(pat, "GET", "/v1/athletes/me/activities?limit=10")).json()) as unknown;
    expect(listed.structuredContent).toEqual(v1);
    await client.close();
  });

  it("a second authorization while the document is fresh fetches nothing", async () => {
    const athlete = await api.person();
    const before = docRequests;
    const client = await connectAssistant(new Assistant(), athlete.id);
    expect(docRequests).toBe(before);
    await client.close();
  });

  it("ends at once when the athlete disconnects it", async () => {
    const athlete = await api.person();
    const provider = new Assistant();
    const client = await connectAssistant(provider, athlete.id);
    expect((await client.callTool({ name: "get_profile", arguments: {} })).isError).toBeFalsy();
    const [grant] = await db
      .select()
      .from(oauthGrants)
      .where(and(eq(oauthGrants.clientId, docUrl), eq(oauthGrants.userId, athlete.id), isNull(oauthGrants.revokedAt)));
    await inWriteCtx({ db, actor: { kind: "session", userId: athlete.id } }, (ctx) => disconnectApp({ ctx, grantId: grant!.id }));
    const res = await fetch(`${api.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${provider.saved!.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${api.url}/.well-known/oauth-protected-resource/mcp"`);
    await client.close().catch(() => {});
  });
});
