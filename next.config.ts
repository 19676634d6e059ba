import type { NextConfig } from "next";
import { DOCS_CSP } from "./lib/http/page-csp";
import { PAGE_BODY_LIMIT_BYTES } from "./scripts/page-body-limit.mjs";

const nextConfig: NextConfig = {
  // PGlite ships a WASM build and data files that must be loaded from node_modules as they are.
  // esbuild bundles the file worker on demand outside a build (lib/files/worker/bundle.ts): a native
  // binary, loaded from node_modules as it is.
  serverExternalPackages: ["@electric-sql/pglite", "@node-rs/argon2", "esbuild"],
  poweredByHeader: false,
  // Next.js gzips answers for clients that accept it. Behind a proxy that compresses, COMPRESS=false
  // leaves that to the proxy and saves the server the CPU (bench/README.md, "Runtime").
  // lib/env.ts refuses any value but true, false, 1 and 0.
  compress: !["false", "0"].includes(process.env.COMPRESS ?? ""),
  typedRoutes: false,
  experimental: {
    serverActions: {
      // The service's forms (sign-in, sign-up, consent, the demo's code exchange) are a few
      // hundred bytes; Next.js stops reading a larger action body at this limit, and the front
      // server refuses a page POST that declares more (scripts/page-body-limit.mjs).
      bodySizeLimit: PAGE_BODY_LIMIT_BYTES,
    },
  },
  async headers() {
    return [
      {
        // No page may be framed (clickjacking, RFC 9700 §4.16): the consent screen, sign-in and
        // sign-up, and console pages whose buttons revoke, disconnect, rotate and delete. One
        // rule for every path, so a new page cannot be left out.
        source: "/:path*",
        headers: [
          { key: "Content-Security-Policy", value: "frame-ancestors 'none'" },
          { key: "X-Frame-Options", value: "DENY" },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
        ],
      },
      {
        // The API reference's own policy (its scripts are its own files). Pages get theirs, with a
        // nonce, from proxy.ts, which sets the header after these rules.
        source: "/docs",
        headers: [{ key: "Content-Security-Policy", value: DOCS_CSP }],
      },
      {
        // Authorize's redirect page, under the same policy (its script is a file of its own).
        source: "/docs/assets/oauth2-redirect.html",
        headers: [{ key: "Content-Security-Policy", value: DOCS_CSP }],
      },
      {
        source: "/oauth/authorize",
        headers: [{ key: "Cache-Control", value: "no-store" }],
      },
    ];
  },
};

export default nextConfig;
