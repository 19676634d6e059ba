// GET /docs/assets/{file}: Swagger UI's files, served from the swagger-ui-dist package.
import { readFile } from "node:fs/promises";
import path from "node:path";

const FILES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
};

const INIT = `window.ui = SwaggerUIBundle({
  url: "/v1/openapi.json",
  dom_id: "#reference",
  // Deep links put a link inside each operation's toggle button: nested controls, and 16 px targets (axe).
  deepLinking: false,
  persistAuthorization: true,
  tryItOutEnabled: true,
  displayRequestDuration: true,
  defaultModelsExpandDepth: 0,
  // Swagger UI's server picker has no accessible name of its own.
  onComplete: () => document.getElementById("servers")?.setAttribute("aria-label", "API server")
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
