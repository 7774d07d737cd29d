import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { requiresTenantBearer } from '../../src/lib/auth-scope';
import type { AppEnv } from '../../src/lib/context';
import { createMetrics } from '../../src/lib/metrics';
import { buildOpenApiDocument } from '../../src/modules/docs/docs.routes';
import { OPERATION_IDS } from '../../src/modules/docs/operation-ids';
import { randomLoopback } from '../helpers/client-address';
import { startTestApp, testEnv, type TestApp } from '../helpers/harness';

const ROOT = path.resolve(__dirname, '../..');

/** The client types `npm run client:generate` would write for `doc` (the generator runs under tsx: its dependencies are ESM-only). */
async function generatedClientTypes(doc: unknown): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'openapi-client-'));
  try {
    const file = path.join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(doc));
    const { stdout } = await promisify(execFile)(path.join(ROOT, 'node_modules/.bin/tsx'), ['scripts/openapi-types.ts', file], {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

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

/** Every operation of the document as [`METHOD /path`, operation]. */
function operations(doc: { paths: Record<string, Record<string, any>> }): [string, any][] {
  const out: [string, any][] = [];
  for (const [path, item] of Object.entries(doc.paths)) for (const method of METHODS) if (item[method]) out.push([`${method.toUpperCase()} ${path}`, item[method]]);
  return out;
}

/** The first line where two texts differ, quoted from both, or null when they are equal. */
function firstDifference(committed: string, generated: string): string | null {
  if (committed === generated) return null;
  const a = committed.split('\n');
  const b = generated.split('\n');
  const i = a.findIndex((line, n) => line !== b[n]);
  const line = i === -1 ? a.length : i;
  return `line ${line + 1}: committed ${JSON.stringify(a[line] ?? '<end>')}, generated ${JSON.stringify(b[line] ?? '<end>')}`;
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
    hono = createApp(app.deps, createMetrics({ processMetrics: false }).http);
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

  // The Redocly recommended rules (npm run openapi:lint runs the CLI itself) that can drift with a route change.
  describe('lint rules', () => {
    it('names every operation from the committed operationId table, and the table has no stale entry', () => {
      const ops = operations(doc);
      expect(ops.length).toBeGreaterThan(150);
      const unnamed = ops.filter(([key]) => !OPERATION_IDS[key]).map(([key]) => `${key}: name it in src/modules/docs/operation-ids.ts`);
      expect(unnamed).toEqual([]);
      const published = new Set(ops.map(([key]) => key));
      expect(Object.keys(OPERATION_IDS).filter((key) => !published.has(key))).toEqual([]);
      expect(ops.filter(([key, op]) => op.operationId !== OPERATION_IDS[key]).map(([key]) => key)).toEqual([]);
    });

    it('gives operations unique, identifier-safe ids a generated SDK can use as method names', () => {
      const ids = operations(doc).map(([, op]) => op.operationId as string);
      expect(ids.filter((id) => !/^[a-z][A-Za-z0-9]*$/.test(id))).toEqual([]);
      expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
      // A few names clients already code against.
      expect(doc.paths['/v1/debts'].get.operationId).toBe('listDebts');
      expect(doc.paths['/v1/campaigns/{id}/pause'].post.operationId).toBe('pauseCampaign');
      expect(doc.paths['/v1/admin/tenants'].post.operationId).toBe('adminProvisionTenant');
    });

    it('gives every operation a summary, a 2xx (or default) response and a 4xx response', () => {
      const problems: string[] = [];
      for (const [key, op] of operations(doc)) {
        const statuses = Object.keys(op.responses ?? {});
        if (!op.summary) problems.push(`${key}: no summary`);
        if (!statuses.some((s) => /^2[0-9X]{2}$/.test(s) || s === 'default')) problems.push(`${key}: no 2xx or default response`);
        if (!statuses.some((s) => /^4[0-9X]{2}$/.test(s))) problems.push(`${key}: no 4xx response`);
        if (op.responses.default && op.responses.default.content?.['application/json']?.schema?.$ref !== '#/components/schemas/Error') {
          problems.push(`${key}: default response is not the Error envelope`);
        }
      }
      expect(problems).toEqual([]);
    });

    it('declares security on every operation: a bearer wherever the tenant-auth middleware demands one', () => {
      expect(doc.security).toEqual([{ bearer: [] }]);
      const schemes = doc.components.securitySchemes;
      expect(Object.keys(schemes).sort()).toEqual(['bearer', 'operatorBearer', 'switchDirectory', 'wsTicket']);
      expect(schemes.switchDirectory).toMatchObject({ type: 'http', scheme: 'basic' });
      expect(schemes.wsTicket).toMatchObject({ type: 'apiKey', in: 'query', name: 'ticket' });
      const problems: string[] = [];
      for (const [key, op] of operations(doc)) {
        const path = key.slice(key.indexOf(' ') + 1);
        if (!Array.isArray(op.security)) problems.push(`${key}: no security`);
        else if (requiresTenantBearer(path) && JSON.stringify(op.security) !== JSON.stringify([{ bearer: [] }])) problems.push(`${key}: guarded by the bearer but declares ${JSON.stringify(op.security)}`);
        else if (path.startsWith('/v1/admin/') && JSON.stringify(op.security) !== JSON.stringify([{ operatorBearer: [] }])) problems.push(`${key}: an operator route without operatorBearer`);
        for (const requirement of op.security ?? []) for (const name of Object.keys(requirement)) if (!schemes[name]) problems.push(`${key}: unknown scheme ${name}`);
      }
      expect(problems).toEqual([]);
    });

    it('pins the operations that are public (security: [])', () => {
      const open = operations(doc)
        .filter(([, op]) => Array.isArray(op.security) && op.security.length === 0)
        .map(([, op]) => op.operationId as string)
        .sort();
      expect(open).toEqual(
        [
          'agentLogin',
          'confirmPasswordReset',
          'downloadSignedFile',
          'getApiReference',
          'getApiReferenceAsset',
          'getHealth',
          'getOpenApiDocument',
          'getWidgetConfig',
          'login',
          'receiveInboundSms',
          'receiveSmsDeliveryReceipt',
          'requestPasswordReset',
        ].sort(),
      );
    });

    it('answers 401 without a credential on every operation that declares bearer, operator or switch credentials', async () => {
      const guarded = operations(doc).filter(([, op]) =>
        op.security.some((r: Record<string, unknown>) => 'bearer' in r || 'operatorBearer' in r || 'switchDirectory' in r),
      );
      expect(guarded.length).toBeGreaterThan(150);
      const answers: string[] = [];
      for (const [key] of guarded) {
        const [method, path] = key.split(' ') as [string, string];
        // Failed operator and login attempts are budgeted per client address across the test database:
        // each request comes from its own address so none spends another file's budget.
        const res = await app.request(method, path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'), { localAddress: randomLoopback() });
        if (res.status !== 401 || res.body?.error?.code !== 'unauthorized') answers.push(`${key}: ${res.status}`);
      }
      expect(answers).toEqual([]);
    });

    it('sets servers relative to where the document is served, and a license', () => {
      expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
      expect(doc.info.license).toEqual({ name: 'Proprietary', identifier: 'LicenseRef-Proprietary' });
    });

    it('publishes PUBLIC_BASE_URL as the server when the deployment sets it', async () => {
      const config = loadConfig(testEnv({ PUBLIC_BASE_URL: 'https://dialer.example.com/' }));
      const configured = createApp({ ...app.deps, config }, createMetrics({ processMetrics: false }).http);
      const res = await configured.request('/v1/openapi.json');
      expect(res.status).toBe(200);
      const body = (await res.json()) as { servers: unknown };
      expect(body.servers).toEqual([{ url: 'https://dialer.example.com', description: expect.any(String) }]);
    });

    it('keeps paths free of trailing slashes and query strings, and parameters unique per operation', () => {
      const problems: string[] = [];
      for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
        if (path.length > 1 && path.endsWith('/')) problems.push(`${path}: trailing slash`);
        if (path.includes('?')) problems.push(`${path}: query in the path`);
        for (const method of METHODS) {
          const params = (item[method]?.parameters ?? []).map((p: any) => `${p.in}:${p.name}`);
          if (new Set(params).size !== params.length) problems.push(`${method} ${path}: repeated parameter`);
        }
      }
      expect(problems).toEqual([]);
    });
  });

  it('matches the committed typed-client types (run npm run client:generate after a route change)', async () => {
    const committed = await readFile(path.join(ROOT, 'src/client/openapi.d.ts'), 'utf8');
    expect(firstDifference(committed, await generatedClientTypes(doc))).toBeNull();
  });

  it.each(['/healthz?x=a%00b', '/v1/openapi.json?x=a%00b', '/v1/docs?x=%00', '/v1/docs/assets/init.js?v=%00'])(
    '%s answers U+0000 in the query with the declared 400',
    async (path) => {
      const res = await app.request('GET', path);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: { code: 'bad_request', message: 'query values must not contain U+0000' } });
    },
  );
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
