import os from "node:os";
import path from "node:path";
import { defineConfig } from "@playwright/test";

const PORT = Number(process.env.E2E_PORT ?? 3210);
const baseURL = `http://localhost:${PORT}`;
// A fresh embedded database per run, seeded with the demo world.
const dataDir = process.env.E2E_DATA_DIR ?? path.join(os.tmpdir(), `aas-e2e-${process.pid}-${Date.now()}`);

export default defineConfig({
  testDir: "e2e",
  fullyParallel: true,
  workers: 2,
  // Guards against a hang, not a speed target: a journey of four people on a loaded
  // two-core machine took over a minute once, so the bound is well above that.
  timeout: 180_000,
  expect: { timeout: 15_000 },
  reporter: process.env.CI ? [["list"], ["json", { outputFile: ".ci/out/e2e.json" }]] : [["list"]],
  use: {
    baseURL,
    trace: "retain-on-failure",
    launchOptions: {
      // Debian's Chromium: Playwright's own browser download cannot work on these machines.
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    },
  },
  webServer: {
    command: "node scripts/start.mjs",
    url: `${baseURL}/signin`,
    timeout: 240_000,
    reuseExistingServer: false,
    stdout: "ignore",
    stderr: "pipe",
    env: {
      PORT: String(PORT),
      BASE_URL: baseURL,
      DATA_DIR: dataDir,
      SEED_DEMO: "true",
      NEXT_TELEMETRY_DISABLED: "1",
      LOG_LEVEL: "warn",
    },
  },
});
