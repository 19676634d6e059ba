import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ESLint } from "eslint";
import ts from "typescript";

// The layers of ARCHITECTURE.md are lint rules (eslint.config.mjs). A rule that silently stops
// matching (a renamed folder, a pattern typo, a block overriding another) would let every
// forbidden arrow back in with a green CI, so each rule is run here on small sources and must
// fire. Type-only import cycles, which no maintained ESLint rule follows, are found here by
// walking the whole import graph with TypeScript's own resolver.

const root = path.resolve(__dirname, "..");
const LAYER_RULES = new Set(["import/no-restricted-paths", "no-restricted-imports", "no-restricted-syntax"]);

let layers: ESLint;
let cycles: ESLint;
beforeAll(() => {
  layers = new ESLint({ cwd: root, ruleFilter: ({ ruleId }) => LAYER_RULES.has(ruleId) });
  // Apart: the cycle rule reads the linted file itself from disk, and the probes above exist only in memory.
  cycles = new ESLint({ cwd: root, ruleFilter: ({ ruleId }) => ruleId === "import/no-cycle" });
});

/** The layer rules' errors for `source` linted as if it were the file at `file`. */
async function layerErrors(file: string, source: string, eslint = layers) {
  const [result] = await eslint.lintText(source, { filePath: path.join(root, file) });
  expect(result!.messages.filter((m) => m.fatal), `${file} does not parse`).toEqual([]);
  return result!.messages.filter((m) => m.severity === 2).map((m) => ({ rule: m.ruleId, message: m.message }));
}

/**
 * The repository file an `@/` or relative import names must exist: the resolving rule skips an
 * import it cannot resolve, and then a case would pass without proving anything.
 */
function expectTargetExists(file: string, specifier: string) {
  const base = specifier.startsWith("@/") ? path.join(root, specifier.slice(2)) : path.resolve(root, path.dirname(file), specifier);
  const found = ["", ".ts", ".tsx", "/index.ts"].some((ext) => existsSync(base + ext));
  expect(found, `${specifier} from ${file} names no file: pick another target`).toBe(true);
}

type Case = [file: string, specifier: string, source: string];
const importOf = (specifier: string) => `import * as m from "${specifier}";\nexport const used = m;\n`;
const typeImportOf = (specifier: string) => `import type * as m from "${specifier}";\nexport type Used = typeof m;\n`;
const dynamicImportOf = (specifier: string) => `export async function load() {\n  return await import("${specifier}");\n}\n`;

function forbidden(name: string, rule: string, cases: Case[], says: RegExp) {
  describe(name, () => {
    for (const [file, specifier, source] of cases) {
      it(`${file} importing ${specifier} fails lint (${rule})`, async () => {
        if (specifier.startsWith("@/") || specifier.startsWith(".")) expectTargetExists(file, specifier);
        const errors = await layerErrors(file, source);
        expect(errors.some((e) => e.rule === rule && says.test(e.message)), JSON.stringify(errors)).toBe(true);
      });
    }
  });
}

function allowed(name: string, cases: Case[]) {
  describe(name, () => {
    for (const [file, specifier, source] of cases) {
      it(`${file} may import ${specifier}`, async () => {
        if (specifier.startsWith("@/") || specifier.startsWith(".")) expectTargetExists(file, specifier);
        expect(await layerErrors(file, source)).toEqual([]);
      });
    }
  });
}

forbidden(
  "lib/ never imports app/, components/ or inngest/, by alias, relative path or dynamic import",
  "import/no-restricted-paths",
  [
    ["lib/auth/probe.ts", "@/app/layout", importOf("@/app/layout")],
    ["lib/auth/probe.ts", "../../app/layout", importOf("../../app/layout")],
    ["lib/auth/probe.ts", "@/components/ui/button", typeImportOf("@/components/ui/button")],
    ["lib/people/probe.ts", "@/inngest/client", importOf("@/inngest/client")],
    ["lib/people/probe.ts", "../../inngest/client", `export async function load() {\n  return import("../../inngest/client");\n}\n`],
  ],
  /lib\/ is the layer below/,
);

forbidden(
  "lib/ never imports Next.js",
  "no-restricted-imports",
  [
    ["lib/auth/probe.ts", "next/navigation", `import { redirect } from "next/navigation";\nexport const go = () => redirect("/");\n`],
    ["lib/auth/probe.ts", "next/headers", `import { headers } from "next/headers";\nexport const h = headers;\n`],
    ["lib/http/probe.ts", "next/server", `import { after } from "next/server";\nexport const a = after;\n`],
    // The block for lib/** must still reach the folders that have rules of their own.
    ["lib/webhooks/probe.ts", "next/navigation", `import { redirect } from "next/navigation";\nexport const go = () => redirect("/");\n`],
    ["lib/db/schema/probe.ts", "next/headers", `import { headers } from "next/headers";\nexport const h = headers;\n`],
  ],
  /Next\.js|schema/,
);

forbidden(
  "app/ and components/ never import the database client",
  "import/no-restricted-paths",
  [
    ["app/oauth/probe/route.ts", "@/lib/db/client", `import { getDb } from "@/lib/db/client";\nexport const d = getDb;\n`],
    ["app/oauth/probe/route.ts", "../../../lib/db/client", typeImportOf("../../../lib/db/client")],
    ["components/auth/probe.tsx", "@/lib/db/client", importOf("@/lib/db/client")],
  ],
  /never open the database/,
);

forbidden(
  "app/ and components/ never import a database driver",
  "no-restricted-imports",
  [
    ["app/oauth/probe/route.ts", "drizzle-orm", `import { eq } from "drizzle-orm";\nexport const e = eq;\n`],
    ["app/(auth)/probe.ts", "postgres", importOf("postgres")],
    ["components/auth/probe.tsx", "@electric-sql/pglite", `import { PGlite } from "@electric-sql/pglite";\nexport const P = PGlite;\n`],
  ],
  /never touch the database/,
);

forbidden(
  "components/ never import from app/",
  "import/no-restricted-paths",
  [["components/auth/probe.tsx", "@/app/(auth)/actions", typeImportOf("@/app/(auth)/actions")]],
  /components\/ sit below app\//,
);

forbidden(
  "the webhook logic never imports a runner",
  "import/no-restricted-paths",
  [
    ["lib/webhooks/probe.ts", "@/inngest/client", importOf("@/inngest/client")],
    ["lib/webhooks/probe.ts", "../../inngest/client", `export async function load() {\n  return import("../../inngest/client");\n}\n`],
    ["lib/webhooks/probe.ts", "./local-runner", importOf("./local-runner")],
    ["lib/webhooks/subscriptions/probe.ts", "../local-runner", typeImportOf("../local-runner")],
  ],
  /never imports a runner/,
);

forbidden(
  "the schema imports nothing of the domains",
  "no-restricted-imports",
  [
    ["lib/db/schema/probe.ts", "../../ids", importOf("../../ids")],
    ["lib/db/schema/probe.ts", "@/lib/auth/scopes", importOf("@/lib/auth/scopes")],
    ["lib/db/schema/probe.ts", "server-only", `import "server-only";\n`],
    // A path that starts with "./" may still climb out of the folder.
    ["lib/db/schema/probe.ts", "./../../ids", importOf("./../../ids")],
    ["lib/db/schema/probe.ts", "./../../auth/scopes", typeImportOf("./../../auth/scopes")],
    ["lib/db/schema/probe.ts", "./people/../../../ids", importOf("./people/../../../ids")],
  ],
  /only drizzle-orm and other schema files/,
);

// no-restricted-imports reads only import declarations and `export … from`: an `import()`
// expression naming the same package is a rule of its own (no-restricted-syntax).
forbidden(
  "lib/ never imports Next.js, not even with import()",
  "no-restricted-syntax",
  [
    ["lib/auth/probe.ts", "next/navigation", dynamicImportOf("next/navigation")],
    ["lib/http/probe.ts", "next/headers", `export async function load() {\n  return await import(\`next/headers\`);\n}\n`],
    ["lib/webhooks/probe.ts", "next/server", dynamicImportOf("next/server")],
  ],
  /Next\.js/,
);

forbidden(
  "app/ and components/ never import a database driver, not even with import()",
  "no-restricted-syntax",
  [
    ["components/auth/probe.tsx", "drizzle-orm", dynamicImportOf("drizzle-orm")],
    ["app/oauth/probe/route.ts", "postgres", dynamicImportOf("postgres")],
    ["app/(auth)/probe.ts", "@electric-sql/pglite", dynamicImportOf("@electric-sql/pglite")],
  ],
  /never touch the database/,
);

forbidden(
  "the schema imports nothing of the domains, not even with import()",
  "no-restricted-syntax",
  [
    ["lib/db/schema/probe.ts", "../../ids", dynamicImportOf("../../ids")],
    ["lib/db/schema/probe.ts", "./../../ids", dynamicImportOf("./../../ids")],
    ["lib/db/schema/probe.ts", "next/headers", dynamicImportOf("next/headers")],
  ],
  /only drizzle-orm and other schema files/,
);

forbidden(
  "nothing in lib/ but its test helpers imports a runner or the process entry",
  "import/no-restricted-paths",
  [
    ["lib/events/probe.ts", "../webhooks/local-runner", importOf("../webhooks/local-runner")],
    ["lib/events/probe.ts", "../webhooks/local-runner", dynamicImportOf("../webhooks/local-runner")],
    ["lib/probe.ts", "./webhooks/local-runner", typeImportOf("./webhooks/local-runner")],
    ["lib/auth/probe.ts", "../../instrumentation-node", importOf("../../instrumentation-node")],
    ["lib/webhooks/subscriptions/probe.ts", "../../../instrumentation-node", dynamicImportOf("../../../instrumentation-node")],
    ["lib/people/probe.ts", "@/instrumentation", importOf("@/instrumentation")],
  ],
  /never imports a runner|process entry/,
);

// An inline import() type names a module no import rule reads: the layered folders name every
// module in a declaration instead.
forbidden(
  "no inline import() types in the layered folders",
  "no-restricted-syntax",
  [
    ["lib/auth/probe.ts", "../../app/layout", `export type M = typeof import("../../app/layout");\n`],
    ["lib/db/schema/probe.ts", "../../ids", `export type M = typeof import("../../ids");\n`],
    ["components/auth/probe.tsx", "drizzle-orm", `export type D = import("drizzle-orm").SQL;\n`],
    ["app/oauth/probe/route.ts", "@/lib/db/client", `export type D = typeof import("@/lib/db/client");\n`],
    ["inngest/probe.ts", "next/server", `export type R = import("next/server").NextRequest;\n`],
  ],
  /import type/,
);

allowed("what the layers allow", [
  // lib/app-events is lib, not app/: the rules match resolved folders, not name prefixes.
  ["lib/webhooks/probe.ts", "../app-events/schemas", importOf("../app-events/schemas")],
  ["lib/auth/probe.ts", "next-auth", `import NextAuth from "next-auth";\nexport const N = NextAuth;\n`],
  ["app/oauth/probe/route.ts", "@/lib/oauth/keys", importOf("@/lib/oauth/keys")],
  ["components/auth/probe.tsx", "@/lib/auth/scopes", importOf("@/lib/auth/scopes")],
  ["inngest/probe.ts", "@/lib/db/client", importOf("@/lib/db/client")],
  ["lib/db/schema/probe.ts", "./people", importOf("./people")],
  ["lib/db/schema/probe.ts", "drizzle-orm/pg-core", importOf("drizzle-orm/pg-core")],
  ["lib/db/schema/probe.ts", "drizzle-orm", importOf("drizzle-orm")],
  // Tests drive the local runner.
  ["lib/webhooks/probe.test.ts", "./local-runner", importOf("./local-runner")],
  ["lib/events/probe.test.ts", "../webhooks/local-runner", importOf("../webhooks/local-runner")],
  // lib/testing/ is the tests' toolbox: it starts the runner for them.
  ["lib/testing/probe.ts", "../webhooks/local-runner", importOf("../webhooks/local-runner")],
  ["lib/db/schema/probe.ts", "./people", dynamicImportOf("./people")],
  ["lib/auth/probe.ts", "next-auth", dynamicImportOf("next-auth")],
  ["components/auth/probe.tsx", "@/lib/auth/scopes", dynamicImportOf("@/lib/auth/scopes")],
]);

describe("import cycles", () => {
  // The cycle rule reads the files an import names from disk: these exist only during the test.
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(root, "lib", "cycle-probe-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a cycle of value imports fails lint (import/no-cycle)", async () => {
    writeFileSync(path.join(dir, "a.ts"), `import { b } from "./b";\nexport const a = () => b;\n`);
    writeFileSync(path.join(dir, "b.ts"), `import { a } from "./a";\nexport const b = () => a;\n`);
    const file = path.relative(root, path.join(dir, "a.ts"));
    const errors = await layerErrors(file, readFileSync(path.join(dir, "a.ts"), "utf8"), cycles);
    expect(errors.map((e) => e.rule)).toContain("import/no-cycle");
  });

  it("the graph walk finds a cycle made of type-only imports, which import/no-cycle skips", () => {
    const elsewhere = mkdtempSync(path.join(tmpdir(), "type-cycle-"));
    try {
      writeFileSync(path.join(elsewhere, "a.ts"), `import type { B } from "./b";\nexport type A = { b?: B };\n`);
      writeFileSync(path.join(elsewhere, "b.ts"), `import type { A } from "./a";\nexport type B = { a?: A };\n`);
      writeFileSync(path.join(elsewhere, "c.ts"), `import type { A } from "./a";\nexport type C = A;\n`);
      const files = ["a.ts", "b.ts", "c.ts"].map((f) => path.join(elsewhere, f));
      expect(importCycles(files, elsewhere)).toEqual([["a.ts", "b.ts"]]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("the service's own files import each other in no circle, type-only imports included", () => {
    const config = ts.getParsedCommandLineOfConfigFile(path.join(root, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
    const files = config!.fileNames.filter((f) => !f.endsWith(".d.ts") && !path.relative(root, f).startsWith("lib/cycle-probe-"));
    expect(files.length).toBeGreaterThan(100);
    expect(importCycles(files, root, config!.options)).toEqual([]);
  });
});

/**
 * Every circle among `files` (each a strongly connected component of the import graph, as paths
 * relative to `base`), counting every import TypeScript sees: `import type`, `export … from`,
 * dynamic `import()`.
 */
function importCycles(files: string[], base: string, options: ts.CompilerOptions = {}): string[][] {
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets: string[] = [];
    for (const { fileName } of importedFiles) {
      const resolved = ts.resolveModuleName(fileName, file, options, ts.sys).resolvedModule;
      if (resolved && !resolved.isExternalLibraryImport && known.has(resolved.resolvedFileName)) targets.push(resolved.resolvedFileName);
    }
    edges.set(file, targets);
  }
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || edges.get(v)!.includes(v)) cycles.push(component.map((f) => path.relative(base, f)).sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
