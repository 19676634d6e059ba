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
new MutationObserver(() => {
  for (const m of document.querySelectorAll(".swagger-ui .modal-ux:not([role])")) {
    const title = m.querySelector(".modal-ux-header h3");
    if (title && !title.id) title.id = "authorize-dialog-title";
    m.setAttribute("role", "dialog");
    m.setAttribute("aria-modal", "true");
    if (title) m.setAttribute("aria-labelledby", title.id);
  }
  for (const b of document.querySelectorAll(".swagger-ui .close-modal:not([aria-label])")) b.setAttribute("aria-label", "Close");
  for (const b of document.querySelectorAll('.swagger-ui .modal-ux button[aria-label^="Apply"]')) b.removeAttribute("aria-label");
  for (const b of document.querySelectorAll(".swagger-ui .copy-to-clipboard > button:not([tabindex])")) b.setAttribute("tabindex", "-1");
}).observe(document.getElementById("reference"), { childList: true, subtree: true, attributes: true, attributeFilter: ["aria-label"] });`;

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
