import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { SERVICE_VERSION, type Config } from '../../config';
import { requiresTenantBearer } from '../../lib/auth-scope';
import type { AppEnv } from '../../lib/context';
import { notFound } from '../../lib/errors';
import { createRouter, errorResponses, jsonContent, z } from '../../lib/openapi';
import { OPERATION_IDS } from './operation-ids';

const DESCRIPTION = `Multi-tenant, compliance-gated control plane for outbound voice and SMS in debt collection.

Conventions: JSON bodies (8 MiB cap, 413 payload_too_large); every response carries X-Request-ID; errors use
{"error":{"code","message"}}; timestamps are RFC 3339 UTC; decimals are JSON strings; list endpoints page with
limit + opaque cursor and answer next_cursor (null on the last page). Non-UUID, unknown and foreign ids are one
identical 404 not_found.`;

/**
 * The package is UNLICENSED. OpenAPI 3.1 wants an SPDX `identifier` or a `url`; SPDX names a license
 * outside its list with a LicenseRef- identifier. (A named constant: the generator's 3.0-era type lacks `identifier`.)
 */
const LICENSE = { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface DocumentOptions {
  /** PUBLIC_BASE_URL when the deployment sets one; otherwise the servers entry is relative to where the document is served. */
  publicBaseUrl?: string;
}

/**
 * The published OpenAPI 3.1 document. Routes declare their own schemas and, where they authenticate
 * differently, their own `security`; here every operation gets its operationId (operation-ids.ts) and
 * the rest their security from the same list the tenant-auth middleware reads: a bearer for /v1 paths
 * it guards, none for everything else.
 */
export function buildOpenApiDocument(app: OpenAPIHono<AppEnv>, options: DocumentOptions = {}) {
  const doc = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'Outbound Dialer Control-Plane API',
      version: SERVICE_VERSION,
      description: DESCRIPTION,
      license: LICENSE,
    },
    servers: [
      options.publicBaseUrl
        ? { url: options.publicBaseUrl, description: 'This deployment (PUBLIC_BASE_URL)' }
        : { url: '/', description: 'The origin that serves this document' },
    ],
    security: [{ bearer: [] }],
  });
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      op.operationId = OPERATION_IDS[`${method.toUpperCase()} ${path}`] ?? op.operationId;
      op.security ??= requiresTenantBearer(path) ? [{ bearer: [] }] : [];
    }
  }
  return doc;
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
export function docsRoutes(root: () => OpenAPIHono<AppEnv>, config: Pick<Config, 'PUBLIC_BASE_URL' | 'publicBaseUrl'>) {
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
      responses: { 200: jsonContent(z.record(z.string(), z.unknown()), 'OpenAPI document'), ...errorResponses(400) },
    }),
    (c) => {
      cached ??= buildOpenApiDocument(root(), { publicBaseUrl: config.PUBLIC_BASE_URL ? config.publicBaseUrl : undefined });
      return c.json(cached, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/docs',
      tags: ['Operations'],
      summary: 'Browsable API reference (no auth)',
      responses: { 200: { description: 'HTML page', content: { 'text/html': { schema: z.string() } } }, ...errorResponses(400) },
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
        ...errorResponses(400, 404),
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
