import "server-only";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { getEnv } from "./env";

type Secrets = Record<string, string>;
let cache: Secrets | undefined;

function file(): string {
  return path.resolve(getEnv().dataDir, "secrets.json");
}

/**
 * A secret the operator did not provide, generated once and persisted under DATA_DIR
 * (mode 0600), never regenerated on restart (CONTRACT §1).
 */
export function persistentSecret(name: string, make: () => string = () => randomBytes(32).toString("base64url")): string {
  if (!cache) {
    try {
      cache = JSON.parse(readFileSync(file(), "utf8")) as Secrets;
    } catch {
      cache = {};
    }
  }
  const existing = cache[name];
  if (existing) return existing;
  const value = make();
  cache = { ...cache, [name]: value };
  mkdirSync(path.dirname(file()), { recursive: true });
  // `wx` would lose to a concurrent writer; a full rewrite under 0600 keeps every name.
  writeFileSync(file(), JSON.stringify(cache, null, 2), { mode: 0o600 });
  return value;
}

export function authSecret(): string {
  return getEnv().authSecret ?? persistentSecret("AUTH_SECRET");
}
