import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { databaseIsLocal, ensureGeneratedSecrets, workerPlan } from "./serve.mjs";

const cores = os.availableParallelism();

describe("npm start's worker plan", () => {
  it("runs one process on the embedded database, which only one process can open", () => {
    expect(workerPlan({}).workers).toBe(1);
    expect(() => workerPlan({ WEB_CONCURRENCY: "2" })).toThrow(/DATABASE_URL/);
  });

  it("leaves a core to a PostgreSQL server on this machine, and uses every core for a remote one", () => {
    expect(workerPlan({ DATABASE_URL: "postgres://db.internal:5432/aas" }).workers).toBe(cores);
    for (const url of ["postgres://postgres@127.0.0.1:5432/test", "postgres://localhost/aas", "postgres://[::1]/aas", "postgres:///aas?host=/var/run/postgresql", "postgres://postgres@%2Fvar%2Frun%2Fpostgresql/aas", "postgres://postgres@/aas?host=/var/run/postgresql", "postgresql://u:p@/aas"]) {
      expect(databaseIsLocal(url), url).toBe(true);
      expect(workerPlan({ DATABASE_URL: url }).workers).toBe(Math.max(1, cores - 1));
    }
    expect(databaseIsLocal("postgres://10.0.0.5/aas")).toBe(false);
    expect(databaseIsLocal("not a url")).toBe(false);
  });

  it("takes WEB_CONCURRENCY over the plan, and refuses a count that is not a positive whole number", () => {
    expect(workerPlan({ DATABASE_URL: "postgres://127.0.0.1/aas", WEB_CONCURRENCY: "3" }).workers).toBe(3);
    expect(() => workerPlan({ DATABASE_URL: "postgres://127.0.0.1/aas", WEB_CONCURRENCY: "0" })).toThrow(/positive/);
    expect(() => workerPlan({ DATABASE_URL: "postgres://127.0.0.1/aas", WEB_CONCURRENCY: "two" })).toThrow(/positive/);
    // Plain decimal digits only, as the README says of every number.
    for (const bad of ["0x2", "1e0", " 2 ", "2.0", "+2", "0b10"]) {
      expect(() => workerPlan({ DATABASE_URL: "postgres://127.0.0.1/aas", WEB_CONCURRENCY: bad }), bad).toThrow(/WEB_CONCURRENCY must be a positive whole number in decimal digits/);
    }
    expect(workerPlan({ DATABASE_URL: "postgres://127.0.0.1/aas", WEB_CONCURRENCY: "02" }).workers).toBe(2);
  });
});

describe("secrets generated before the workers start", () => {
  const dataDir = () => mkdtempSync(path.join(os.tmpdir(), "aas-serve-"));
  const read = (dir: string) => JSON.parse(readFileSync(path.join(dir, "secrets.json"), "utf8")) as Record<string, string>;

  it("writes AUTH_SECRET and SECRETS_KEY once, so every worker signs with the same keys", () => {
    const dir = dataDir();
    ensureGeneratedSecrets({ DATA_DIR: dir });
    const first = read(dir);
    expect(first.AUTH_SECRET).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.SECRETS_KEY).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.AUTH_SECRET).not.toBe(first.SECRETS_KEY);
    ensureGeneratedSecrets({ DATA_DIR: dir });
    expect(read(dir)).toEqual(first);
    expect(statSync(path.join(dir, "secrets.json")).mode & 0o077).toBe(0);
  });

  it("generates only what neither the environment nor the file holds, and keeps what the file has", () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, "secrets.json"), JSON.stringify({ AUTH_SECRET: "kept", OTHER: "x" }));
    ensureGeneratedSecrets({ DATA_DIR: dir, SECRETS_KEY: "from-env" });
    expect(read(dir)).toEqual({ AUTH_SECRET: "kept", OTHER: "x" });
    ensureGeneratedSecrets({ DATA_DIR: dir });
    expect(read(dir)).toMatchObject({ AUTH_SECRET: "kept", OTHER: "x", SECRETS_KEY: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
  });

  it("refuses a secrets file it cannot read rather than replacing the keys in it", () => {
    const dir = dataDir();
    writeFileSync(path.join(dir, "secrets.json"), "{not json");
    expect(() => ensureGeneratedSecrets({ DATA_DIR: dir })).toThrow(/not readable JSON/);
    expect(readFileSync(path.join(dir, "secrets.json"), "utf8")).toBe("{not json");
  });
});
