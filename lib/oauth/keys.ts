import "server-only";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JSONWebKeySet, type JWK } from "jose";
import { getDb, type Db } from "../db/client";
import { signingKeys } from "../db/schema";
import { randomBase62 } from "../crypto/random";
import { seal, unseal } from "../crypto/seal";
import { log } from "../log";

type SigningKey = { kid: string; privateKey: CryptoKey };
type KeyCache = {
  signing?: Promise<SigningKey>;
  jwks?: Promise<JSONWebKeySet>;
  verify?: ReturnType<typeof createLocalJWKSet>;
  /** A reload for a token naming an unknown kid, shared by every request that asks meanwhile. */
  reloading?: Promise<JSONWebKeySet>;
  /** When the last such reload started. */
  reloadedAt?: number;
  /** Access tokens whose signature, type, issuer and audience were verified with these keys. */
  verified?: Map<string, VerifiedToken>;
};

/**
 * At most one reload of the keys every this many milliseconds for tokens naming a kid this
 * process does not know. Anyone can send such a token: without the bound each one would cost a
 * query. A key another instance created is learned on the first token that names it, unless a
 * reload happened within the interval; its tokens are then refused until the next one.
 */
export const UNKNOWN_KID_RELOAD_INTERVAL_MS = 30_000;

/** What verifying an access token established, kept so the same token is not verified again. */
export type VerifiedToken = { claims: Record<string, unknown> & { exp: number } };

const g = globalThis as unknown as { __aasKeys?: KeyCache };
const cache = (): KeyCache => (g.__aasKeys ??= {});

/** How `private_jwk` is stored: the JWK sealed with SECRETS_KEY (lib/crypto/seal.ts). */
type SealedJwk = { sealed: string };

function isSealed(stored: unknown): stored is SealedJwk {
  return typeof stored === "object" && stored !== null && typeof (stored as SealedJwk).sealed === "string";
}

export function sealPrivateJwk(jwk: JWK): SealedJwk {
  return { sealed: seal(JSON.stringify(jwk)) };
}

/**
 * The private JWK of a `signing_keys` row: unsealed, or as a row written before keys were
 * sealed holds it (a plain JWK).
 */
export function privateJwkOf(stored: unknown): JWK {
  if (!isSealed(stored)) return stored as JWK;
  try {
    return JSON.parse(unseal(stored.sealed)) as JWK;
  } catch (err) {
    // Not a secret, and the one thing an operator needs to know to fix it.
    throw new Error(`The token signing key cannot be unsealed: SECRETS_KEY is not the one it was sealed with (${String(err)}).`);
  }
}

const oldestActive = (db: Db) =>
  db.select().from(signingKeys).where(isNull(signingKeys.retiredAt)).orderBy(asc(signingKeys.createdAt)).limit(1);

async function loadOrCreate(db: Db): Promise<SigningKey> {
  let [row] = await oldestActive(db);
  if (!row) {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const kid = randomBase62(16);
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
    await db.insert(signingKeys).values({ kid, alg: "ES256", privateJwk: sealPrivateJwk({ ...(await exportJWK(privateKey)), kid }), publicJwk });
    // Instances starting together may each insert one; all of them sign with the oldest.
    [row] = await oldestActive(db);
  }
  const jwk = privateJwkOf(row!.privateJwk);
  if (!isSealed(row!.privateJwk)) {
    // Written before keys were sealed: sealed in place. Compared with what was read, so of two
    // instances doing this at once one writes and the other changes nothing.
    await db
      .update(signingKeys)
      .set({ privateJwk: sealPrivateJwk(jwk) })
      .where(and(eq(signingKeys.kid, row!.kid), sql`${signingKeys.privateJwk} = ${JSON.stringify(row!.privateJwk)}::jsonb`));
    log.info("sealed the token signing key at rest", { kid: row!.kid });
  }
  return { kid: row!.kid, privateKey: (await importJWK(jwk, "ES256")) as CryptoKey };
}

/**
 * The ES256 key that signs access tokens: generated once, kept in the database (its private
 * part sealed), so it survives restarts and every instance uses the same one.
 */
export function signingKey(db: Db): Promise<SigningKey> {
  const c = cache();
  return (c.signing ??= loadOrCreate(db).catch((err: unknown) => {
    c.signing = undefined;
    throw err;
  }));
}

async function loadJwks(db: Db): Promise<JSONWebKeySet> {
  await signingKey(db);
  const rows = await db.select({ jwk: signingKeys.publicJwk }).from(signingKeys).orderBy(asc(signingKeys.createdAt));
  return { keys: rows.map((r) => r.jwk as JWK) };
}

/** Every key that may have signed a live token: the active one and retired ones (for rotation). */
export function publicJwks(db: Db): Promise<JSONWebKeySet> {
  const c = cache();
  return (c.jwks ??= loadJwks(db).catch((err: unknown) => {
    c.jwks = undefined;
    throw err;
  }));
}

/** GET /oauth/jwks: `publicJwks` of the service's own database, opened here rather than in app/. */
export async function servedJwks(): Promise<JSONWebKeySet> {
  return publicJwks(await getDb());
}

/**
 * A jose key resolver over the published keys. A token naming a kid not among them makes the
 * keys reload (a key another instance created), at most once every
 * UNKNOWN_KID_RELOAD_INTERVAL_MS; requests that ask while a reload runs wait for that one.
 */
export async function verificationKeys(db: Db, kid: string | undefined) {
  const c = cache();
  const jwks = await publicJwks(db);
  if (kid && !jwks.keys.some((k) => k.kid === kid)) {
    const now = Date.now();
    if (!c.reloading && now - (c.reloadedAt ?? -Infinity) >= UNKNOWN_KID_RELOAD_INTERVAL_MS) {
      c.reloadedAt = now;
      const reloading = loadJwks(db)
        .then((fresh) => {
          c.jwks = Promise.resolve(fresh);
          c.verify = undefined;
          return fresh;
        })
        .finally(() => {
          if (c.reloading === reloading) c.reloading = undefined;
        });
      c.reloading = reloading;
    }
    if (c.reloading) return createLocalJWKSet(await c.reloading);
  }
  return (c.verify ??= createLocalJWKSet(await publicJwks(db)));
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
