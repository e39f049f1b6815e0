/**
 * The reference page (decisions.md §15): `GET /api/public/docs` serves Swagger UI over the
 * served OpenAPI document (`/api/public/openapi.json`), with every asset from this server — no
 * font, CDN, validator or telemetry request to any other host — so it works with the network cut.
 * A reader pastes a token under "Authorize" and tries calls against this same server.
 *
 * Assets are addressed relative to the page, so the page also works behind a reverse proxy that
 * mounts the service under a prefix. For the same reason `/api/public/docs/` (a trailing slash,
 * under which those relative addresses would miss) redirects to the page by a relative `Location`.
 */
import type { Hono } from 'hono';
import { VERSION } from '../version.js';
import type { AppEnv } from './context.js';
import { DOCS_ASSET_FILES, docsAssets, type DocsAssetName } from './docs-assets.js';

export const DOCS_PATH = '/api/public/docs';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>outreach-api ${VERSION}: API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="docs/swagger-ui.css">
<style>body { margin: 0; } .swagger-ui .topbar { display: none; }</style>
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: no badge fetched from the public validator. The document's server URL is
// relative (/api/public/v1), so "Try it out" calls this same origin.
const INIT = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  displayRequestDuration: true,
});
`;

const TYPES: Record<DocsAssetName | 'init.js', string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'init.js': 'text/javascript; charset=utf-8',
};
const CACHE = { 'Cache-Control': 'public, max-age=3600' };

export function registerDocsRoutes(app: Hono<AppEnv>): void {
  app.get(DOCS_PATH, (c) => c.html(PAGE, 200, CACHE));
  app.get(`${DOCS_PATH}/`, (c) => c.redirect('../docs', 301));
  app.get(`${DOCS_PATH}/init.js`, (c) => c.body(INIT, 200, { ...CACHE, 'Content-Type': TYPES['init.js'] }));
  for (const name of DOCS_ASSET_FILES) {
    // Loaded on first request, not at start-up: a server nobody reads the docs of pays nothing.
    app.get(`${DOCS_PATH}/${name}`, (c) => c.body(docsAssets()[name], 200, { ...CACHE, 'Content-Type': TYPES[name] }));
  }
}
