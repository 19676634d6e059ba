// Builds the file worker (./entry.ts) into one self-contained ES module, its dependencies
// (@garmin/fitsdk, sax) inside: the worker process loads a file from disk, and in the built server lib/ exists only inside Next.js's chunks. Plain Node can run
// this file as it is (types only, `.ts` imports), so scripts/build-file-worker.mjs shares it.
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type * as Esbuild from "esbuild";

export const WORKER_ENTRY = "lib/files/worker/entry.ts";
/** `npm run build` writes it here after `next build` (which empties .next first), so it ships with the chunks it matches. */
export const BUILT_WORKER = ".next/file-worker/entry.mjs";
/** Tests and `next dev` bundle on demand here, again whenever a source it was built from changes. */
export const CACHED_WORKER = "node_modules/.cache/file-worker/entry.mjs";

const inputsOf = (file: string) => `${file}.inputs.json`;

/** Bundles the worker into `outFile` (atomically: test files in parallel processes may bundle at once). */
export async function bundleFileWorker(root: string, outFile: string): Promise<void> {
  // Named at run time, so Turbopack neither bundles nor traces esbuild (its native binary breaks
  // `next build`); a production server uses the worker `npm run build` made and never gets here.
  const esbuildModule = "esbuild";
  const esbuild = (await import(/* turbopackIgnore: true */ /* webpackIgnore: true */ esbuildModule)) as typeof Esbuild;
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.join(root, WORKER_ENTRY)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    outfile: outFile,
    write: false,
    metafile: true,
    logLevel: "silent",
    legalComments: "none",
    // A CommonJS dependency's require() of a Node built-in needs a require in an ES module.
    banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
  });
  const code = result.outputFiles.find((f) => f.path.endsWith(".mjs"));
  if (!code) throw new Error("esbuild produced no worker file");
  mkdirSync(path.dirname(outFile), { recursive: true });
  const tmp = `${outFile}.${process.pid}.${Date.now()}.tmp`;
  // Relative to the checkout: a cache copied with node_modules into another checkout (a git
  // worktree) is then judged against that checkout's sources, not rebuilt from nowhere or,
  // worse, taken as fresh against the sources it was copied from.
  const inputs = Object.keys(result.metafile.inputs).map((p) => path.relative(root, path.resolve(root, p)));
  writeFileSync(`${tmp}.inputs`, JSON.stringify(inputs));
  writeFileSync(tmp, code.contents);
  // The inputs list first: a bundle is never seen without the list that dates it.
  renameSync(`${tmp}.inputs`, inputsOf(outFile));
  renameSync(tmp, outFile);
}

/** Whether `file` exists and is newer than every source of `root` it was bundled from. */
export function bundleIsFresh(root: string, file: string): boolean {
  try {
    const built = statSync(file).mtimeMs;
    const inputs = (JSON.parse(readFileSync(inputsOf(file), "utf8")) as string[]).map((p) => path.resolve(root, p));
    return inputs.every((p) => existsSync(p) && statSync(p).mtimeMs <= built);
  } catch {
    return false;
  }
}
