import { readdirSync, statSync } from "node:fs";
import path from "node:path";

/** The App Router route files (`route.ts`) under `dir`, at any depth, as absolute paths. */
export function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const full = path.join(dir, e);
    return statSync(full).isDirectory() ? routeFiles(full) : e === "route.ts" ? [full] : [];
  });
}
