// GET /docs/assets/{file}: Swagger UI's files, served from the swagger-ui-dist package.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { DOCS_OAUTH_REDIRECT_PATH } from "@/lib/openapi/docs-redirect";

const FILES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  // Where Authorize's authorization-code flow comes back to: it hands the code to the page that
  // opened it (its script is its own file, so the page runs under /docs's policy).
  "oauth2-redirect.html": "text/html; charset=utf-8",
  "oauth2-redirect.js": "text/javascript; charset=utf-8",
};

const INIT = `window.ui = SwaggerUIBundle({
  url: "/v1/openapi.json",
  dom_id: "#reference",
  // Deep links put a link inside each operation's toggle button: nested controls, and 16 px targets (axe).
  deepLinking: false,
  persistAuthorization: true,
  tryItOutEnabled: true,
  displayRequestDuration: true,
  // A form field left empty is left out: Swagger UI sends every optional field of a multipart
  // form, empty ones too ("Send empty value" starts ticked), and the service takes an empty
  // name or external_id as one given, and refuses it.
  requestInterceptor: (req) => {
    if (typeof FormData !== "undefined" && req.body instanceof FormData) {
      for (const [name, value] of [...req.body.entries()]) if (value === "") req.body.delete(name);
    }
    return req;
  },
  defaultModelsExpandDepth: 0,
  oauth2RedirectUrl: location.origin + "${DOCS_OAUTH_REDIRECT_PATH}",
  // Swagger UI's server picker has no accessible name of its own.
  onComplete: () => document.getElementById("servers")?.setAttribute("aria-label", "API server")
});
// The service requires PKCE (S256) of every client, public or confidential, and a confidential
// client's secret in HTTP Basic authentication (one in the body is refused with a Basic challenge,
// which a browser would answer with its own sign-in prompt).
window.ui.initOAuth({ usePkceWithAuthorizationCodeGrant: true, useBasicAuthenticationWithAccessCodeGrant: true });
// Swagger UI's Authorize dialog is no dialog to assistive technology, its close button has no
// name, its "Authorize" buttons are named otherwise than they read (voice control says what it
// sees), and each operation's copy button takes the focus at no width (axe, WCAG 4.1.2, 2.5.3,
// 2.4.7): mended as they appear.
// The dialog is modal as a dialog is (WAI-ARIA's dialog pattern): the focus moves into it when it
// opens, Tab and Shift+Tab go round inside it, and it goes back to the button that opened it.
const FOCUSABLE = 'button, input, select, textarea, a[href], [tabindex]:not([tabindex="-1"])';
const focusables = (dialog) => [...dialog.querySelectorAll(FOCUSABLE)].filter((el) => !el.disabled && el.getClientRects().length > 0 && el.tabIndex >= 0);
// Swagger UI moves the focus into the dialog itself as it opens: the opener is the last element
// focused outside it.
let lastOutside = null;
let openedFrom = null;
document.addEventListener("focusin", (e) => {
  if (e.target instanceof HTMLElement && !e.target.closest(".modal-ux")) lastOutside = e.target;
});
new MutationObserver(() => {
  for (const m of document.querySelectorAll(".swagger-ui .modal-ux:not([role])")) {
    const title = m.querySelector(".modal-ux-header h3");
    if (title && !title.id) title.id = "authorize-dialog-title";
    m.setAttribute("role", "dialog");
    m.setAttribute("aria-modal", "true");
    if (title) m.setAttribute("aria-labelledby", title.id);
    openedFrom = lastOutside;
    if (!m.contains(document.activeElement)) (m.querySelector(".auth-container input") ?? focusables(m)[0])?.focus();
  }
  if (openedFrom && !document.querySelector(".swagger-ui .modal-ux")) {
    // Authorizing re-renders the opener: then the page's own Authorize button takes the focus.
    (openedFrom.isConnected ? openedFrom : document.querySelector(".swagger-ui .auth-wrapper .authorize"))?.focus();
    openedFrom = null;
  }
  for (const b of document.querySelectorAll(".swagger-ui .close-modal:not([aria-label])")) b.setAttribute("aria-label", "Close");
  for (const b of document.querySelectorAll('.swagger-ui .modal-ux button[aria-label^="Apply"]')) b.removeAttribute("aria-label");
  for (const b of document.querySelectorAll(".swagger-ui .copy-to-clipboard > button:not([tabindex])")) b.setAttribute("tabindex", "-1");
}).observe(document.getElementById("reference"), { childList: true, subtree: true, attributes: true, attributeFilter: ["aria-label"] });
document.addEventListener("keydown", (e) => {
  if (e.key !== "Tab") return;
  const dialog = document.querySelector('.swagger-ui .modal-ux[role="dialog"]');
  const items = dialog ? focusables(dialog) : [];
  if (items.length === 0) return;
  const first = items[0];
  const last = items[items.length - 1];
  const at = document.activeElement;
  if (!dialog.contains(at) || (e.shiftKey ? at === first : at === last)) {
    e.preventDefault();
    (e.shiftKey ? last : first).focus();
  }
});`;

export async function GET(_req: Request, { params }: { params: Promise<{ file: string }> }) {
  const { file } = await params;
  if (file === "init.js") {
    return new Response(INIT, { headers: { "Content-Type": "text/javascript; charset=utf-8" } });
  }
  const type = FILES[file];
  if (!type) return new Response("Not found", { status: 404 });
  const body = await readFile(path.join(process.cwd(), "node_modules", "swagger-ui-dist", file));
  return new Response(body, { headers: { "Content-Type": type, "Cache-Control": "public, max-age=86400" } });
}
