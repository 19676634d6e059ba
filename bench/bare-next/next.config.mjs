// The baseline app for `npm run bench`: built with the repository's own `next`, and written
// under node_modules/.cache so the build stays out of git, lint and the typecheck.
/** @type {import("next").NextConfig} */
const config = {
  distDir: "../../node_modules/.cache/aas-bench/bare-next",
  poweredByHeader: false,
};

export default config;
