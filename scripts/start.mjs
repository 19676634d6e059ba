#!/usr/bin/env node
// `npm start`: builds when there is no build (or the sources are newer than it), then serves
// the production server (scripts/serve.mjs: one process per core over PostgreSQL, one on the
// embedded database) and prints where to go and how to sign in.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { resolveDataDir, serve, workerPlan } from "./serve.mjs";

const root = path.resolve(import.meta.dirname, "..");
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
const port = env.PORT || "3000";

/**
 * The settings, checked before anything is built, printed or written (the banner, DATA_DIR's
 * secrets.json): by lib/env.ts's own getEnv, the check every server process makes as it starts,
 * loaded through tsx as the other TypeScript tools here are (lib/ is TypeScript with extensionless
 * imports, which Node.js alone does not load). Without tsx (an install without dev packages) the
 * server processes' own check is the only one. Then the worker plan's (WEB_CONCURRENCY).
 */
async function checkSettings() {
  let tsImport;
  try {
    ({ tsImport } = await import("tsx/esm/api"));
  } catch (err) {
    if (err?.code !== "ERR_MODULE_NOT_FOUND") throw err;
  }
  try {
    if (tsImport) (await tsImport(path.join(root, "lib", "env.ts"), import.meta.url)).getEnv();
    workerPlan(env);
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
}
await checkSettings();
const baseUrl = (env.BASE_URL || `http://localhost:${port}`).replace(/\/+$/, "");

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

const buildId = path.join(root, ".next", "BUILD_ID");
const sources = ["app", "components", "lib", "inngest", "public", "drizzle"].map((d) => path.join(root, d)).filter(existsSync);
const files = ["package.json", "next.config.ts", "instrumentation.ts", "instrumentation-node.ts"].map((f) => path.join(root, f)).filter(existsSync);
const stale =
  !existsSync(buildId) ||
  Math.max(...sources.map(newestMtime), ...files.map((f) => statSync(f).mtimeMs)) > statSync(buildId).mtimeMs;

if (stale) {
  console.log("Building the service (first start, or sources changed)…");
  const r = spawnSync(process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "build"], { cwd: root, env, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
// After `next build`, which empties .next; also when an older build predates the worker file.
if (stale || !existsSync(path.join(root, ".next", "file-worker", "entry.mjs"))) {
  const r = spawnSync(process.execPath, [path.join(root, "scripts", "build-file-worker.mjs")], { cwd: root, env, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

// Absolute, so the banner names where the data is and every server process uses that place.
env.DATA_DIR = resolveDataDir(env, root);
const embedded = !env.DATABASE_URL;
// As lib/env.ts reads SEED_DEMO: true or 1.
const seeding = ["true", "1"].includes(env.SEED_DEMO || (embedded ? "true" : "false"));
console.log(`
  Athlete Activity Service
  ────────────────────────
  Console:  ${baseUrl}/signin
  API:      ${baseUrl}/v1   (reference: ${baseUrl}/docs)
  Database: ${embedded ? `embedded PostgreSQL (PGlite) in ${env.DATA_DIR}` : "PostgreSQL (DATABASE_URL)"}
${seeding ? `  Demo:     sign in as ava@example.com (athlete), cora@example.com (coach) or dev@example.com (developer), password demo-password\n` : ""}`);

await serve({ appDir: root, nextArgs: ["-p", port, ...process.argv.slice(2)], env }).catch((err) => {
  console.error(err.message);
  process.exit(1);
});
