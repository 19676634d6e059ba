import "server-only";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
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
    // A file that is there but cannot be read is an error, never an empty one: secrets made anew
    // over it would end every session and leave every sealed secret undecryptable.
    let text: string | undefined;
    try {
      text = readFileSync(file(), "utf8");
    } catch (err) {
      if (existsSync(file())) throw new Error(`${file()} cannot be read: ${(err as Error).message}`);
    }
    try {
      cache = text === undefined ? {} : (JSON.parse(text) as Secrets);
    } catch (err) {
      throw new Error(`${file()} is not readable JSON: ${(err as Error).message}. Restore it, or remove it to make new secrets (sessions end, and sealed secrets are lost).`);
    }
  }
  const existing = cache[name];
  if (existing) return existing;
  const value = make();
  cache = { ...cache, [name]: value };
  mkdirSync(path.dirname(file()), { recursive: true });
  // `wx` would lose to a concurrent writer; a full rewrite under 0600 keeps every name. Written
  // beside it and renamed over it, so a crash mid-write leaves the old file whole.
  const tmp = `${file()}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(cache, null, 2), { mode: 0o600 });
  renameSync(tmp, file());
  return value;
}

export function authSecret(): string {
  return getEnv().authSecret ?? persistentSecret("AUTH_SECRET");
}
