import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomBytes, type KeyObject } from "node:crypto";

// AES-256-GCM under a key derived from the given secret: the format of everything the service
// seals (`v1.<iv>.<tag>.<body>`, base64url). Free of settings so the bench can read a value
// sealed under a key it gave the service; lib/crypto/seal.ts supplies the service's key.

/** Secrets a process uses are few (the service's one, a test's or the bench's own). */
const MAX_KEYS = 8;
const keys = new Map<string, KeyObject>();

/**
 * The AES key of a secret, derived once: a cipher given a Buffer key makes a key object of it
 * on every call, which cost 50 of an unseal's 60 µs (Node 24, bench/README.md), and an unseal
 * runs for every webhook attempt.
 */
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(createHash("sha256").update(secret).digest());
    if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value!);
    keys.set(secret, key);
  }
  return key;
}

export function sealWith(secret: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(secret), iv);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(".");
}

export function unsealWith(secret: string, sealed: string): string {
  const [version, iv, tag, body] = sealed.split(".");
  if (version !== "v1" || !iv || !tag || body === undefined) throw new Error("Not a sealed secret.");
  // The whole 16-byte tag: GCM would otherwise take a truncated one as proof.
  const decipher = createDecipheriv("aes-256-gcm", keyOf(secret), Buffer.from(iv, "base64url"), { authTagLength: 16 });
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
}
