import path from "node:path";

export const REPO_ROOT = path.resolve(import.meta.dirname, "../..");
export const RESULTS_DIR = path.join(REPO_ROOT, "bench", "results");
/** Build output of helper apps: under node_modules/.cache, out of git, lint and the typecheck. */
export const CACHE_DIR = path.join(REPO_ROOT, "node_modules", ".cache", "aas-bench");
export const NEXT_BIN = path.join(REPO_ROOT, "node_modules", "next", "dist", "bin", "next");
