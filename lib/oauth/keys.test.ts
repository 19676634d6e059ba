import { beforeAll, describe, expect, it, vi } from "vitest";
import { inWriteCtx } from "../http/operation";
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from "jose";
import type { Db } from "../db/client";
import { oauthClients, signingKeys } from "../db/schema";
import { getEnv } from "../env";
import { registerApp } from "../oauth-clients/register-app";
import { setupApi } from "../testing/fixtures";
import { clientSecretFingerprint } from "./access-token";
import { privateJwkOf, resetKeyCacheForTests, sealPrivateJwk, UNKNOWN_KID_RELOAD_INTERVAL_MS } from "./keys";

// The token-signing keys in signing_keys: sealed at rest, and reloaded for an unknown kid at a
// bounded rate. Real HTTP against the test server, on PGlite and (TEST_DATABASE_URL) PostgreSQL.

const api = setupApi();
let db: Db;
let app: { clientId: string; secret: string };

beforeAll(async () => {
  db = await api.db();
  const developer = await api.person();
  const { app: registered, client_secret } = await inWriteCtx({ db, actor: { kind: "session", userId: developer.id } }, (ctx) => registerApp({ ctx, input: { name: "Key Tester", kind: "confidential", redirect_uris: ["https://keys.example/cb"] } }));
  app = { clientId: registered.client_id, secret: client_secret! };
});

async function clientCredentialsToken(): Promise<string> {
  const res = await fetch(`${api.url}/oauth/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${app.clientId}:${app.secret}`).toString("base64")}`,
    },
    body: "grant_type=client_credentials",
  });
  const body = (await res.json()) as { access_token?: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.access_token!;
}

async function activeKeyRow() {
  const [row] = await db.select().from(signingKeys).orderBy(signingKeys.createdAt).limit(1);
  return row!;
}

/** A client-credentials token for the test app, as the service would sign it, under `kid`. */
async function tokenSignedWith(key: CryptoKey, kid: string): Promise<string> {
  const [client] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, app.clientId));
  const env = getEnv();
  return new SignJWT({ client_id: app.clientId, csf: clientSecretFingerprint(client!.secretHash) })
    .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid })
    .setIssuer(env.baseUrl)
    .setSubject(app.clientId)
    .setAudience(env.apiBaseUrl)
    .setIssuedAt()
    .setExpirationTime("600s")
    .setJti(randomUUID())
    .sign(key);
}

/** A key another instance created: stored as the service stores keys, sealed. */
async function keyFromAnotherInstance(): Promise<{ kid: string; privateKey: CryptoKey }> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = `other-${randomUUID().slice(0, 8)}`;
  await db.insert(signingKeys).values({
    kid,
    alg: "ES256",
    privateJwk: sealPrivateJwk({ ...(await exportJWK(privateKey)), kid }),
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" },
  });
  return { kid, privateKey };
}

/** Counts the queries that read signing_keys, at the database's edge (every `db.select(…).from(signingKeys)`). */
function countKeyQueries() {
  const select = db.select.bind(db);
  const count = { n: 0 };
  const spy = vi.spyOn(db, "select").mockImplementation(((...args: unknown[]) => {
    const builder = (select as (...a: unknown[]) => { from: (t: unknown) => unknown })(...args);
    const from = builder.from.bind(builder);
    builder.from = (table: unknown) => {
      if (table === signingKeys) count.n++;
      return from(table);
    };
    return builder;
  }) as unknown as Db["select"]);
  return { count, restore: () => spy.mockRestore() };
}

describe("the private signing key at rest", () => {
  it("is sealed in signing_keys: the row holds no `d` member, and what it seals signs the tokens", async () => {
    const token = await clientCredentialsToken();
    const row = await activeKeyRow();
    expect(Object.keys(row.privateJwk as object)).toEqual(["sealed"]);
    expect(JSON.stringify(row.privateJwk)).not.toMatch(/"d"/);
    const jwk = privateJwkOf(row.privateJwk);
    expect(jwk).toMatchObject({ kty: "EC", crv: "P-256", kid: row.kid, d: expect.any(String) });
    // The sealed key is the one published: same public point.
    expect(row.publicJwk).toMatchObject({ x: jwk.x, y: jwk.y, kid: row.kid });
    expect((await api.call(token, "GET", "/v1/app/usage")).status).toBe(200);
  });

  it("written by the code before sealing (a plain JWK) still signs, and is sealed in place", async () => {
    const row = await activeKeyRow();
    const plain = privateJwkOf(row.privateJwk);
    await db.update(signingKeys).set({ privateJwk: plain }).where(eq(signingKeys.kid, row.kid));
    resetKeyCacheForTests(); // a process starting on such a database

    const token = await clientCredentialsToken();
    expect((await api.call(token, "GET", "/v1/app/usage")).status).toBe(200);
    const after = await activeKeyRow();
    expect(after.kid).toBe(row.kid);
    expect(Object.keys(after.privateJwk as object)).toEqual(["sealed"]);
    expect(privateJwkOf(after.privateJwk)).toEqual(plain);
  });
});

describe("tokens naming a kid the process does not know", () => {
  it(`reload the keys at most once per ${UNKNOWN_KID_RELOAD_INTERVAL_MS / 1000} s, however many arrive: 100 random kids cost one query`, async () => {
    resetKeyCacheForTests();
    expect((await api.call(await clientCredentialsToken(), "GET", "/v1/app/usage")).status).toBe(200);
    // Another instance has since added a key this process has not loaded.
    const added = await keyFromAnotherInstance();

    const queries = countKeyQueries();
    try {
      const stranger = (await generateKeyPair("ES256")).privateKey;
      const tokens = await Promise.all(Array.from({ length: 100 }, () => tokenSignedWith(stranger, randomUUID())));
      // Half at once (they share one reload), then the rest one by one.
      const first = await Promise.all(tokens.slice(0, 50).map((t) => api.call(t, "GET", "/v1/app/usage")));
      const rest: Response[] = [];
      for (const t of tokens.slice(50)) rest.push(await api.call(t, "GET", "/v1/app/usage"));
      for (const res of [...first, ...rest]) {
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ code: "token_invalid" });
      }
      expect(queries.count.n).toBe(1);

      // The one reload found the other instance's key: its tokens are accepted.
      expect((await api.call(await tokenSignedWith(added.privateKey, added.kid), "GET", "/v1/app/usage")).status).toBe(200);
      // A key added after it waits for the next reload the interval allows: that is the bound.
      const later = await keyFromAnotherInstance();
      expect((await api.call(await tokenSignedWith(later.privateKey, later.kid), "GET", "/v1/app/usage")).status).toBe(401);
      expect(queries.count.n).toBe(1);
    } finally {
      queries.restore();
    }
  });
});
