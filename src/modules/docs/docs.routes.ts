import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { SERVICE_VERSION } from '../../config';
import type { AppEnv } from '../../lib/context';
import { notFound } from '../../lib/errors';
import { createRouter, errorResponses, jsonContent, z } from '../../lib/openapi';

const DESCRIPTION = `Multi-tenant, compliance-gated control plane for outbound voice and SMS in debt collection.

Conventions: JSON bodies (8 MiB cap, 413 payload_too_large); every response carries X-Request-ID; errors use
{"error":{"code","message"}}; timestamps are RFC 3339 UTC; decimals are JSON strings; list endpoints page with
limit + opaque cursor and answer next_cursor (null on the last page). Non-UUID, unknown and foreign ids are one
identical 404 not_found.`;

export function buildOpenApiDocument(app: OpenAPIHono<AppEnv>) {
  return app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'Outbound Dialer Control-Plane API', version: SERVICE_VERSION, description: DESCRIPTION },
  });
}

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
};

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Dialer API reference</title>
<link rel="stylesheet" href="/v1/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/v1/docs/assets/swagger-ui-bundle.js"></script>
<script src="/v1/docs/assets/init.js"></script>
</body></html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#ui', deepLinking: true });`;

/** The published interface description and a browsable reference page served from local assets. */
export function docsRoutes(root: () => OpenAPIHono<AppEnv>) {
  const app = createRouter();
  // Resolve the folder only: requiring the package would load its multi-megabyte bundle.
  const assetDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  let cached: ReturnType<typeof buildOpenApiDocument> | null = null;

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/openapi.json',
      tags: ['Operations'],
      summary: 'This OpenAPI 3.1 document (no auth)',
      responses: { 200: jsonContent(z.record(z.string(), z.unknown()), 'OpenAPI document') },
    }),
    (c) => {
      cached ??= buildOpenApiDocument(root());
      return c.json(cached, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/docs',
      tags: ['Operations'],
      summary: 'Browsable API reference (no auth)',
      responses: { 200: { description: 'HTML page', content: { 'text/html': { schema: z.string() } } } },
    }),
    (c) => c.html(PAGE),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/docs/assets/{file}',
      tags: ['Operations'],
      summary: 'Static assets of the reference page',
      request: { params: z.object({ file: z.string() }) },
      responses: {
        200: { description: 'Asset (CSS or JavaScript)' },
        ...errorResponses(404),
      },
    }),
    async (c) => {
      const { file } = c.req.valid('param');
      if (file === 'init.js') return c.body(INIT, 200, { 'content-type': 'application/javascript; charset=utf-8' });
      const type = ASSETS[file];
      if (!type) throw notFound();
      const body = await readFile(path.join(assetDir, file));
      return c.body(body, 200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
    },
  );
  return app;
}
