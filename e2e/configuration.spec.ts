import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";

/**
 * One server process over the build the journeys use, with `settings` added to its environment:
 * resolves when it exits (with its code and what it wrote to stderr) or once it says it is
 * ready, which with a bad setting is the failure (it then served a 500 for every request).
 */
function startServer(settings: Record<string, string>): Promise<{ exited: boolean; code: number | null; stderr: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "aas-config-"));
  const child = spawn(process.execPath, ["scripts/server.mjs", "-p", "0", "-H", "127.0.0.1"], {
    env: { ...process.env, DATA_DIR: dataDir, SEED_DEMO: "false", NEXT_TELEMETRY_DISABLED: "1", ...settings },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (!chunk.toString().includes("Ready on port")) return;
      child.kill("SIGKILL");
      resolve({ exited: false, code: null, stderr });
    });
    child.once("exit", (code) => resolve({ exited: true, code, stderr }));
  });
}

test("a bad setting stops the service with a message naming it, rather than serving 500s", async () => {
  for (const [name, value] of [["LOG_LEVEL", "loud"], ["DELIVERY_RUNNER", "bogus"]] as const) {
    const r = await startServer({ [name]: value });
    expect({ name, exited: r.exited, code: r.code }).toEqual({ name, exited: true, code: 1 });
    expect(r.stderr).toContain("Invalid configuration");
    expect(r.stderr).toContain(`${name}:`);
  }
});
