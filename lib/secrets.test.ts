import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { resetEnvForTests } from "./env";

// Each case loads lib/secrets.ts afresh (its cache is per module) over a data directory of its own.
async function secretsIn(dir: string) {
  process.env.DATA_DIR = dir;
  resetEnvForTests();
  vi.resetModules();
  return import("./secrets");
}

const before = process.env.DATA_DIR;
afterEach(() => {
  if (before === undefined) delete process.env.DATA_DIR;
  else process.env.DATA_DIR = before;
  resetEnvForTests();
});

describe("secrets the operator did not provide (CONTRACT §1: generated once, never regenerated)", () => {
  it("are generated once into DATA_DIR/secrets.json (0600) and read back by the next start", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "aas-secrets-"));
    const first = (await secretsIn(dir)).persistentSecret("AUTH_SECRET");
    const second = (await secretsIn(dir)).persistentSecret("AUTH_SECRET");
    expect(second).toBe(first);
    const file = path.join(dir, "secrets.json");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ AUTH_SECRET: first });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("two copies of the module in one server (as Next.js loads it) end up with the same secrets, whichever reads the file first", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "aas-secrets-"));
    const a = await secretsIn(dir);
    const b = await secretsIn(dir);
    // One copy reads the file (for another secret) before the other makes AUTH_SECRET.
    const key = a.persistentSecret("SECRETS_KEY");
    const auth = b.persistentSecret("AUTH_SECRET");
    expect(a.persistentSecret("AUTH_SECRET")).toBe(auth);
    expect(b.persistentSecret("SECRETS_KEY")).toBe(key);
    expect(JSON.parse(readFileSync(path.join(dir, "secrets.json"), "utf8"))).toEqual({ SECRETS_KEY: key, AUTH_SECRET: auth });
  });

  it("refuses a secrets file it cannot read, and leaves it as it is, rather than making new ones over it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "aas-secrets-"));
    const file = path.join(dir, "secrets.json");
    writeFileSync(file, '{"AUTH_SECRET": "kept", ');
    const { persistentSecret } = await secretsIn(dir);
    expect(() => persistentSecret("SECRETS_KEY")).toThrow(/secrets\.json is not readable JSON/);
    expect(readFileSync(file, "utf8")).toBe('{"AUTH_SECRET": "kept", ');
  });
});
