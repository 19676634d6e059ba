#!/usr/bin/env node
// Bundles the file worker (lib/files/worker/entry.ts) into .next/file-worker/entry.mjs, the
// module the built server's worker processes load (lib/files/worker/pool.ts). Runs after
// `next build`, which empties .next first: `npm run build` and `npm start` call both.
import path from "node:path";
import { BUILT_WORKER, bundleFileWorker } from "../lib/files/worker/bundle.ts";

const root = path.resolve(import.meta.dirname, "..");
const started = performance.now();
await bundleFileWorker(root, path.join(root, BUILT_WORKER));
console.log(`File worker: ${BUILT_WORKER} (${Math.round(performance.now() - started)} ms)`);
