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
 * (mode 0600), never regenerated on restart (CONTRACT §1). The launcher generates the service's
 * own before the server starts (scripts/serve.mjs); here a name the cache lacks is looked up in
 * the file again before one is made: Next.js loads this module more than once in one server
 * (route handlers, and pages with their server actions, each have their copy and cache), and a
 * copy that had read the file before another wrote a secret into it would otherwise make a
 * second one and write it over the first (sessions then signed with one key and read with the
 * other: the console signed nobody in).
 */
export function persistentSecret(name: string, make: () => string = () => randomBytes(32).toString("base64url")): string {
  const cached = cache?.[name];
  if (cached) return cached;
  cache = readSecretsFile(file());
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
