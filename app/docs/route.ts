// GET /docs: the interactive API reference, rendered by Swagger UI from /v1/openapi.json.
export function GET() {
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>API reference · Athlete Activity Service</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <style>body{margin:0;font-family:system-ui,sans-serif}.topbar{display:none}
  header{padding:12px 20px;border-bottom:1px solid #e2e8f0;display:flex;gap:16px;align-items:center}
  header a{color:#1466bd;text-decoration:none;font-size:14px}</style>
</head>
<body>
  <header><strong>Athlete Activity Service API</strong><a href="/v1/openapi.json">openapi.json</a><a href="/settings/tokens">Create a token</a></header>
  <div id="reference"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/init.js"></script>
</body>
</html>`;
  return new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "public, max-age=300" } });
}
