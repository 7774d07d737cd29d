import type { OpenAPIHono } from '@hono/zod-openapi';
import { createApp } from '../../src/app';
import type { AppEnv } from '../../src/lib/context';
import { createMetrics } from '../../src/lib/metrics';
import { buildOpenApiDocument } from '../../src/modules/docs/docs.routes';
import { startTestApp, type TestApp } from '../helpers/harness';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Hono `/v1/users/:id` -> OpenAPI `/v1/users/{id}` (a `:param{regex}` keeps only the name). */
const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}');

function servedRoutes(app: OpenAPIHono<AppEnv>): string[] {
  const out = new Set<string>();
  for (const r of app.routes) {
    if (r.method === 'ALL') continue; // middleware (app.use)
    out.add(`${r.method.toUpperCase()} ${toOpenApiPath(r.path)}`);
  }
  return [...out].sort();
}

function documentedRoutes(doc: { paths?: Record<string, Record<string, unknown>> }): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) if (item[method]) out.push(`${method.toUpperCase()} ${path}`);
  }
  return out.sort();
}

describe('OpenAPI document', () => {
  let app: TestApp;
  let hono: OpenAPIHono<AppEnv>;
  let doc: any;

  beforeAll(async () => {
    app = await startTestApp();
    hono = createApp(app.deps, createMetrics().http);
    const res = await app.request('GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(async () => {
    await app.close();
  });

  it('is OpenAPI 3.1 at the interface version, served without auth as JSON', async () => {
    const res = await app.request('GET', '/v1/openapi.json');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe('0.36.0');
    expect(doc.info.title).toEqual(expect.any(String));
    const health = await app.request('GET', '/healthz');
    expect(doc.info.version).toBe(health.body.version);
  });

  it('equals the document built from the app in-process', () => {
    expect(JSON.parse(JSON.stringify(buildOpenApiDocument(hono)))).toEqual(doc);
  });

  it('sees a non-trivial route table (not vacuous)', () => {
    const served = servedRoutes(hono);
    expect(served).toEqual(expect.arrayContaining(['GET /healthz', 'GET /v1/openapi.json', 'GET /v1/me', 'POST /v1/admin/tenants', 'DELETE /v1/users/{id}']));
    expect(served.length).toBeGreaterThan(15);
  });

  it('documents every served route', () => {
    const documented = new Set(documentedRoutes(doc));
    expect(servedRoutes(hono).filter((r) => !documented.has(r))).toEqual([]);
  });

  it('serves every documented route', () => {
    const served = new Set(servedRoutes(hono));
    expect(documentedRoutes(doc).filter((r) => !served.has(r))).toEqual([]);
  });

  it('declares every path parameter of every operation', () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const declared = [...(item.parameters ?? []), ...(op.parameters ?? [])].filter((p: any) => p.in === 'path').map((p: any) => p.name);
        for (const name of names) if (!declared.includes(name)) problems.push(`${method.toUpperCase()} ${path}: {${name}} undeclared`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('gives every operation responses, and every error response the shared envelope', () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const statuses = Object.keys(op.responses ?? {});
        // 101 is the success of a websocket upgrade (GET /v1/ws).
        if (!statuses.some((s) => s.startsWith('2') || s === '101')) problems.push(`${method} ${path}: no success response`);
        for (const status of statuses.filter((s) => Number(s) >= 400)) {
          const schema = op.responses[status]?.content?.['application/json']?.schema;
          if (schema?.$ref !== '#/components/schemas/Error') problems.push(`${method} ${path} ${status}: not the Error envelope`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(doc.components.schemas.Error.properties.error.required).toEqual(expect.arrayContaining(['code', 'message']));
  });

  it('marks bearer routes with a security scheme that exists', () => {
    const schemes = Object.keys(doc.components.securitySchemes ?? {});
    expect(schemes).toEqual(expect.arrayContaining(['bearer', 'operatorBearer']));
    const me = doc.paths['/v1/me'].get;
    expect(me.security).toEqual([{ bearer: [] }]);
    for (const [, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const method of METHODS) {
        for (const requirement of item[method]?.security ?? []) {
          for (const name of Object.keys(requirement)) expect(schemes).toContain(name);
        }
      }
    }
  });

  it('has unique operation ids when it names any', () => {
    const ids: string[] = [];
    for (const item of Object.values<Record<string, any>>(doc.paths)) for (const m of METHODS) if (item[m]?.operationId) ids.push(item[m].operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('API reference page', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('serves the Swagger UI page without auth, pointing at local assets', async () => {
    const res = await app.request('GET', '/v1/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('/v1/docs/assets/swagger-ui.css');
    expect(res.text).toContain('/v1/docs/assets/swagger-ui-bundle.js');
    expect(res.text).not.toMatch(/https?:\/\//); // no CDN
    const srcs = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(srcs.length).toBeGreaterThanOrEqual(3);
    for (const src of srcs) {
      const asset = await app.request('GET', src);
      expect({ src, status: asset.status }).toEqual({ src, status: 200 });
    }
  });

  it.each([
    ['swagger-ui.css', /^text\/css/],
    ['swagger-ui-bundle.js', /^(application|text)\/javascript/],
    ['init.js', /^(application|text)\/javascript/],
  ])('serves %s with its content type', async (file, type) => {
    const res = await app.request('GET', `/v1/docs/assets/${file}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(type);
    expect(res.text.length).toBeGreaterThan(0);
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('init.js points Swagger UI at the served document', async () => {
    const res = await app.request('GET', '/v1/docs/assets/init.js');
    expect(res.text).toContain("'/v1/openapi.json'");
  });

  it.each(['nope.js', 'index.html', 'swagger-ui.js.map', '..%2F..%2Fpackage.json', '..%2Fswagger-ui.css', '%2Fetc%2Fpasswd', 'package.json'])(
    'answers unknown asset %s with the 404 envelope',
    async (file) => {
      const res = await app.request('GET', `/v1/docs/assets/${file}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
    },
  );

  it('does not serve nested paths under assets', async () => {
    const res = await app.request('GET', '/v1/docs/assets/a/b.js');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});
