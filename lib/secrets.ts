import "server-only";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { readSecretsFile, writeSecretsFile } from "../scripts/secrets-file.mjs";
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
  cache ??= readSecretsFile(file());
  const existing = cache[name];
  if (existing) return existing;
  const value = make();
  cache = { ...cache, [name]: value };
  writeSecretsFile(file(), cache);
  return value;
}

export function authSecret(): string {
  return getEnv().authSecret ?? persistentSecret("AUTH_SECRET");
}
