// The most a POST to a page (a server action, a form) may carry: Next.js stops reading an
// action's body at `experimental.serverActions.bodySizeLimit` (next.config.ts), and the front
// server (scripts/front-server.mjs) refuses a page POST that declares more, or declares no length.
// The service's forms (sign-in, sign-up, consent, the demo's code exchange) are a few hundred bytes.
export const PAGE_BODY_LIMIT_BYTES = 64 * 1024;
