// GET /docs: the interactive API reference, rendered by Swagger UI from /v1/openapi.json. Its
// Content-Security-Policy is set in next.config.ts (DOCS_CSP), whose headers a route's own would not replace.
export function GET() {
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>API reference · Athlete Activity Service</title>
  <link rel="icon" href="/icon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <style>body{margin:0;font-family:system-ui,sans-serif}.topbar{display:none}
  header{padding:12px 20px;border-bottom:1px solid #e2e8f0;display:flex;gap:16px;align-items:center}
  header a{color:#1466bd;text-decoration:none;font-size:14px}
  /* Swagger UI's own colours fall below WCAG AA contrast in places: darker ones, same hues. */
  .swagger-ui .info .title small{background:#475569}
  .swagger-ui .info .title small.version-stamp{background:#166534}
  .swagger-ui .info .title small pre{color:#fff}
  .swagger-ui .info a.url,.swagger-ui .info .url{color:#1e40af}
  .swagger-ui .btn.authorize span,.swagger-ui .btn.authorize{color:#166534;border-color:#166534}
  .swagger-ui .btn.authorize svg{fill:#166534}
  .swagger-ui .opblock .opblock-summary-method{color:#fff;text-shadow:none}
  .swagger-ui .opblock.opblock-get .opblock-summary-method{background:#1d4ed8}
  .swagger-ui .opblock.opblock-post .opblock-summary-method{background:#047857}
  .swagger-ui .opblock.opblock-put .opblock-summary-method{background:#b45309}
  .swagger-ui .opblock.opblock-patch .opblock-summary-method{background:#0f766e}
  .swagger-ui .opblock.opblock-delete .opblock-summary-method{background:#b91c1c}
  .swagger-ui .opblock.opblock-head .opblock-summary-method,.swagger-ui .opblock.opblock-options .opblock-summary-method{background:#6d28d9}
  .swagger-ui .btn.execute{background:#1d4ed8;border-color:#1d4ed8;color:#fff}
  .swagger-ui .try-out__btn.cancel,.swagger-ui .btn.cancel{color:#b91c1c;border-color:#b91c1c}
  .swagger-ui .parameter__in{color:#475569}
  .swagger-ui .microlight span[style*="211, 99, 99"],.swagger-ui .microlight span[style*="#d36363"]{color:#fca5a5 !important}</style>
</head>
<body>
  <header><strong>Athlete Activity Service API</strong><a href="/v1/openapi.json">openapi.json</a><a href="/settings/tokens">Create a token</a></header>
  <main><div id="reference"></div></main>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/init.js"></script>
</body>
</html>`;
  return new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "public, max-age=300" } });
}
