/**
 * The Content-Security-Policy of the service's pages (sign-in, consent, the console, the demo):
 * scripts run only if the page's own answer named them, with a nonce made for that answer
 * (`'strict-dynamic'` lets Next.js's bootstrap load its chunks), so markup that ever slipped
 * into a page (an app's name, a file's text) cannot run script, inline handlers included.
 *
 * - `img-src` admits any https image (and http in development): an app's logo is on its own host.
 * - `style-src 'unsafe-inline'`: React's `style` props and the chart library's inline styles; a
 *   style cannot run script.
 * - No `form-action`: Chrome applies it to the redirect after a form is sent, which would stop the
 *   consent screen's answer on its way to the app's redirect URI.
 * - Development adds `'unsafe-eval'` (React's dev tools rebuild call stacks with it) and
 *   WebSocket connections (hot reload).
 */
export function pageCsp(nonce: string, development: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob: https:${development ? " http:" : ""}`,
    "font-src 'self' data:",
    `connect-src 'self'${development ? " ws: wss:" : ""}`,
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * The policy of /docs, an HTML page the service writes itself (app/docs/route.ts) with no inline
 * script: its scripts are its own files, so it needs no nonce.
 */
export const DOCS_CSP = pageCsp("", false).replace(" 'nonce-' 'strict-dynamic'", "");

/** A nonce for one answer: 128 random bits, base64. */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}
