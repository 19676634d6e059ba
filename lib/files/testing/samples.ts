import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * Real device recordings, copied unchanged from public repositories (samples/README.md names
 * each source and its license); SAMPLES_DIR points the tests at another folder of the same shape.
 */
export const SAMPLES_DIR = process.env.SAMPLES_DIR ?? path.join(__dirname, "samples");

export function sampleFiles(folder: "fit" | "gpx" | "tcx" | "other"): string[] {
  return readdirSync(path.join(SAMPLES_DIR, folder))
    .filter((f) => !f.startsWith("."))
    .sort();
}

export function sample(folder: string, name: string): Uint8Array {
  return new Uint8Array(readFileSync(path.join(SAMPLES_DIR, folder, name)));
}

/** A copy with `count` bytes from `at` replaced by their bitwise complement. */
export function flipped(bytes: Uint8Array, at: number, count = 1): Uint8Array {
  const out = bytes.slice();
  for (let i = at; i < at + count && i < out.length; i++) out[i] = out[i]! ^ 0xff;
  return out;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export const utf8 = (s: string) => new TextEncoder().encode(s);
