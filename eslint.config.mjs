import next from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

// The layers of ARCHITECTURE.md and STYLE.md ("How this codebase is shaped"): each arrow the
// design forbids is a zone or a package list here, so `npm run lint` rejects it instead of a
// comment asking nicely. lib/layers.test.ts proves every one of them still fires.
//
// Folders are matched by import/no-restricted-paths, which resolves each import first (through
// tsconfig's `@/` alias), so `@/app/x`, `../../app/x` and `await import("../../inngest/x")` are
// the same arrow, and `lib/app-events` is not `app/`. `import type` counts too: a type is a
// dependency of the source even when it is erased from the build.
const root = import.meta.dirname;

const layerZones = [
  {
    target: "./lib",
    from: ["./app", "./components", "./inngest"],
    message: "lib/ is the layer below: app/, components/ and inngest/ call into lib, never the other way.",
  },
  {
    target: "./components",
    from: "./app",
    message: "components/ sit below app/: a shape both need belongs in lib/ or components/.",
  },
  {
    target: ["./app", "./components"],
    from: "./lib/db/client.ts",
    message: "app/ and components/ never open the database: call a lib verb that takes `db`.",
  },
  {
    // A runner (inngest/, the local runner) calls the delivery logic; the logic never picks one.
    target: "./lib/webhooks",
    from: "./inngest",
    message: "The webhook logic never imports a runner: inngest/ calls lib/webhooks, not the reverse.",
  },
  {
    // The local runner is a runner too: the process entry (instrumentation.ts) starts it, and
    // tests drive it (their helpers in lib/testing/ too); nothing else in lib/ reaches for it.
    target: ["./lib/!(*.test).ts", "./lib/!(testing)/**/!(local-runner|*.test).ts"],
    from: "./lib/webhooks/local-runner.ts",
    message: "The webhook logic never imports a runner: the process entry starts the local runner, which calls the logic.",
  },
  {
    // The process entry starts everything; nothing it starts reaches back for it.
    target: "./lib",
    from: ["./instrumentation.ts", "./instrumentation-node.ts"],
    message: "lib/ never imports the process entry (instrumentation*.ts): it starts lib, not the other way.",
  },
];

// Packages, by name: Next.js in lib/, the database drivers in app/ and components/.
const nextInLib = {
  // Nothing in lib/ needs Next.js: it speaks web-standard Request/Response and takes what a
  // page or action reads from Next.js's request scope (headers, cookies) as arguments.
  // next/navigation's redirect() and notFound() throw Next.js's control-flow errors, which only
  // a page or an action may decide to throw; next/headers only works inside Next.js's request
  // scope, so lib code using it could not run over plain HTTP in tests (lib/testing/server.ts)
  // or in a runner. next-auth (Auth.js, lib/auth/next-auth.ts) is the session library, not Next.js.
  regex: "^next(/|$)",
  message: "lib/ never imports Next.js: return the decision (a path, a result) and let the page or action redirect.",
};
const databaseDrivers = {
  regex: "^(drizzle-orm|postgres|@electric-sql/pglite)(/|$)",
  message: "app/ and components/ never touch the database: call a lib verb that takes `db`.",
};
// The schema is the bottom of the house: drizzle's column builders and its sibling tables.
// A sibling is "./x", never a path that climbs back out ("./../../ids", "./people/../../../ids").
const schemaOnlyDrizzle = {
  regex: "^(?!(drizzle-orm(/|$)|\\./(?!.*\\.\\.(/|$))))",
  message: "lib/db/schema imports only drizzle-orm and other schema files, nothing of the domains.",
};

// no-restricted-imports reads import declarations and `export … from` only: an `import()` of the
// same module is caught here, by its literal (or template literal's leading) text.
const dynamicImports = (...patterns) =>
  patterns.flatMap(({ regex, message }) => {
    const re = `/${regex.replaceAll("/", "\\/")}/`;
    return [
      { selector: `ImportExpression[source.value=${re}]`, message },
      { selector: `ImportExpression[source.type="TemplateLiteral"][source.quasis.0.value.cooked=${re}]`, message },
    ];
  });

// A type named inline (`typeof import("../app/x")`, `import("drizzle-orm").SQL`) is a dependency
// neither import rule reads: in the layered folders every module is named by an import
// declaration (`import type` for a type), which the rules above check.
const inlineTypeImports = {
  selector: "TSImportType",
  message: "Name the module in an `import type` declaration (the layer rules read declarations, not inline import() types).",
};

const config = [
  ...next,
  ...nextTs,
  { ignores: [".next/**", "node_modules/**", ".data/**", "drizzle/**", "next-env.d.ts", "test-results/**", "playwright-report/**"] },
  {
    // Playwright fixtures receive a function named `use`; it is not a React hook.
    files: ["e2e/**"],
    rules: { "react-hooks/rules-of-hooks": "off" },
  },
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["**/*.{ts,tsx,mts,mjs}"],
    // The import rules resolve, and the cycle rule parses, what every import names. Packages
    // cannot import our files back, so their declarations are not parsed (that was most of
    // the lint's time), and a resolution is kept for the whole run instead of 30 s.
    settings: { "import/ignore": ["node_modules"], "import/cache": { lifetime: "∞" } },
    rules: {
      "import/no-restricted-paths": ["error", { basePath: root, zones: layerZones }],
    },
  },
  {
    // A cycle leaves one side's bindings undefined while the other loads. The rule skips
    // `import type` (no maintained ESLint rule follows type-only edges): lib/layers.test.ts
    // walks the whole graph, types included. Nothing imports a test file, so none can be on a
    // cycle, and their many imports were much of the rule's time.
    files: ["**/*.{ts,tsx,mts,mjs}"],
    ignores: ["**/*.test.ts"],
    rules: { "import/no-cycle": ["error", { ignoreExternal: true }] },
  },
  // no-restricted-imports takes one option list per file, the last matching block's, so each
  // block names every package list that applies to its files.
  // no-restricted-syntax likewise.
  {
    files: ["app/**", "components/**", "lib/**", "inngest/**", "instrumentation*.ts"],
    rules: { "no-restricted-syntax": ["error", inlineTypeImports] },
  },
  {
    files: ["lib/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [nextInLib] }],
      "no-restricted-syntax": ["error", inlineTypeImports, ...dynamicImports(nextInLib)],
    },
  },
  {
    files: ["lib/db/schema/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [schemaOnlyDrizzle] }],
      "no-restricted-syntax": ["error", inlineTypeImports, ...dynamicImports(schemaOnlyDrizzle)],
    },
  },
  {
    files: ["app/**", "components/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [databaseDrivers] }],
      "no-restricted-syntax": ["error", inlineTypeImports, ...dynamicImports(databaseDrivers)],
    },
  },
];

export default config;
