import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const startScript = fileURLToPath(new URL("./start.mjs", import.meta.url));

/** `npm start` with `settings` added to its environment, in a directory of its own; resolves when it exits. */
function start(cwd: string, settings: Record<string, string>) {
  // Its own process group, so that whatever it starts can be stopped with it.
  const proc = spawn(process.execPath, [startScript], {
    cwd,
    env: { ...process.env, SEED_DEMO: "", WEB_CONCURRENCY: "", DATABASE_URL: "", ...settings },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  let err = "";
  proc.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    // A start that got past its settings must not build the checkout the tests run in.
    if (out.includes("Building")) process.kill(-proc.pid!, "SIGKILL");
  });
  proc.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
    proc.once("exit", (code) => {
      // Anything it started (a server process) goes with it.
      try {
        process.kill(-proc.pid!, "SIGKILL");
      } catch {
        // Nothing left.
      }
      resolve({ code, out, err });
    }),
  );
}

describe("npm start (scripts/start.mjs) with a bad setting", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("says which setting is bad and exits 1 before it prints its banner or writes anything", async () => {
    for (const [name, settings] of [
      ["BASE_URL", { BASE_URL: "http://localhost:3000/app?x=1" }],
      ["DATABASE_URL", { DATABASE_URL: "mysql://db.internal/aas", WEB_CONCURRENCY: "2" }],
      ["LOG_LEVEL", { LOG_LEVEL: "loud" }],
      ["PORT", { PORT: "0x50" }],
      ["WEB_CONCURRENCY", { WEB_CONCURRENCY: "two", DATABASE_URL: "postgres://db.internal/aas" }],
    ] as const) {
      const cwd = mkdtempSync(path.join(os.tmpdir(), "aas-start-"));
      dirs.push(cwd);
      const r = await start(cwd, { DATA_DIR: "data", ...settings });
      // Before, the banner (with the demo's passwords) and the worker count came first.
      expect({ name, out: r.out }).toEqual({ name, out: "" });
      // Before, DATA_DIR/secrets.json was generated for a service that never started.
      expect({ name, written: readdirSync(cwd) }).toEqual({ name, written: [] });
      expect(existsSync(path.join(cwd, "data"))).toBe(false);
      expect({ name, code: r.code }).toEqual({ name, code: 1 });
      expect(r.err).toContain(name);
      if (name !== "WEB_CONCURRENCY") expect(r.err).toContain(`Invalid configuration:\n  ${name}:`);
    }
  }, 60_000);
});
