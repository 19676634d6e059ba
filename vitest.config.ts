import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@\//, replacement: root },
      // Next.js resolves `server-only` to an empty module on the server; so do tests.
      { find: /^server-only$/, replacement: `${root}lib/testing/empty.ts` },
    ],
  },
  test: {
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", "e2e/**", ".next/**", ".data/**"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Vite puts its own BASE_URL ("/") into process.env; the service reads BASE_URL as its
    // address, so tests that start no HTTP server (lib/testing/server.ts sets it) get a real one.
    env: { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent", NEXT_TELEMETRY_DISABLED: "1", BASE_URL: "http://localhost:3000" },
  },
});
