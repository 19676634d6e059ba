import "server-only";
import { asc, isNull } from "drizzle-orm";
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JSONWebKeySet, type JWK } from "jose";
import type { Db } from "../db/client";
import { signingKeys } from "../db/schema";
import { randomBase62 } from "../crypto/random";

type SigningKey = { kid: string; privateKey: CryptoKey };
type KeyCache = {
  signing?: Promise<SigningKey>;
  jwks?: Promise<JSONWebKeySet>;
  verify?: ReturnType<typeof createLocalJWKSet>;
  /** Access tokens whose signature, type, issuer and audience were verified with these keys. */
  verified?: Map<string, VerifiedToken>;
};

/** What verifying an access token established, kept so the same token is not verified again. */
export type VerifiedToken = { claims: Record<string, unknown> & { exp: number } };

const g = globalThis as unknown as { __aasKeys?: KeyCache };
const cache = (): KeyCache => (g.__aasKeys ??= {});

async function loadOrCreate(db: Db): Promise<SigningKey> {
  let [row] = await db.select().from(signingKeys).where(isNull(signingKeys.retiredAt)).orderBy(asc(signingKeys.createdAt)).limit(1);
  if (!row) {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const kid = randomBase62(16);
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
    await db.insert(signingKeys).values({ kid, alg: "ES256", privateJwk: { ...(await exportJWK(privateKey)), kid }, publicJwk });
    // Instances starting together may each insert one; all of them sign with the oldest.
    [row] = await db.select().from(signingKeys).where(isNull(signingKeys.retiredAt)).orderBy(asc(signingKeys.createdAt)).limit(1);
  }
  return { kid: row!.kid, privateKey: (await importJWK(row!.privateJwk as JWK, "ES256")) as CryptoKey };
}

/**
 * The ES256 key that signs access tokens: generated once, kept in the database, so it
 * survives restarts and every instance uses the same one.
 */
export function signingKey(db: Db): Promise<SigningKey> {
  const c = cache();
  return (c.signing ??= loadOrCreate(db).catch((err: unknown) => {
    c.signing = undefined;
    throw err;
  }));
}

/** Every key that may have signed a live token: the active one and retired ones (for rotation). */
export function publicJwks(db: Db): Promise<JSONWebKeySet> {
  const c = cache();
  return (c.jwks ??= (async () => {
    await signingKey(db);
    const rows = await db.select({ jwk: signingKeys.publicJwk }).from(signingKeys).orderBy(asc(signingKeys.createdAt));
    return { keys: rows.map((r) => r.jwk as JWK) };
  })().catch((err: unknown) => {
    c.jwks = undefined;
    throw err;
  }));
}

/** A jose key resolver over the published keys; refreshed when a token names an unknown kid. */
export async function verificationKeys(db: Db, kid: string | undefined) {
  const c = cache();
  const jwks = await publicJwks(db);
  if (kid && !jwks.keys.some((k) => k.kid === kid)) {
    c.jwks = undefined;
    c.verify = undefined;
    return createLocalJWKSet(await publicJwks(db));
  }
  return (c.verify ??= createLocalJWKSet(jwks));
}

/**
 * Tokens verified with the current keys (see verifyAccessToken). Belongs to the key cache, so
 * whatever drops the keys drops what was verified with them.
 */
export function verifiedTokens(): Map<string, VerifiedToken> {
  return (cache().verified ??= new Map());
}

/** Tests that swap databases must not keep another database's keys. */
export function resetKeyCacheForTests(): void {
  g.__aasKeys = {};
}
