import { randomUUID } from 'node:crypto';
import { withTenantSql } from '../../src/lib/tenancy';
import { WIDGET_ALLOWLIST, widgetMayCall } from '../../src/lib/widget-allowlist';
import { provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';

jest.setTimeout(120_000);

/** The /v1 paths that carry no tenant bearer (SPEC "What the service does" item 2): a widget token means nothing there. */
const UNAUTHENTICATED = [/^\/v1\/auth\//, /^\/v1\/admin\//, /^\/v1\/openapi\.json$/, /^\/v1\/docs(\/|$)/, /^\/v1\/ws$/];
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** What the allowlist answers, as opposed to a listed route's own 403 (another agent's call, say). */
const ALLOWLIST_REFUSAL = 'a widget token (ddw_) cannot call this route';

interface Operation {
  method: string;
  template: string;
  mediaTypes: string[];
}

let app: TestApp;
let tenant: ProvisionedTenant;
let operations: Operation[];

beforeAll(async () => {
  app = await startTestApp();
  tenant = await provisionTenant(app);
  const doc = await app.request('GET', '/v1/openapi.json');
  expect(doc.status).toBe(200);
  const paths = doc.body.paths as Record<string, Record<string, { requestBody?: { content?: Record<string, unknown> } }>>;
  operations = Object.entries(paths).flatMap(([template, item]) =>
    METHODS.filter((m) => item[m] !== undefined).map((m) => ({
      method: m.toUpperCase(),
      template,
      mediaTypes: Object.keys(item[m]!.requestBody?.content ?? {}),
    })),
  );
});
afterAll(async () => {
  await app?.close();
});

const isTenantRoute = (op: Operation) => op.template.startsWith('/v1/') && !UNAUTHENTICATED.some((re) => re.test(op.template));
const concrete = (template: string) => template.replace(/\{[^}]+\}/g, () => randomUUID());
/** A template with its parameter names dropped: the allowlist and the document may name a parameter differently. */
const shape = (template: string) => template.replace(/\{[^}]+\}/g, '{}');

/** Sends the operation with the bearer: writes carry an empty body of the media type the route reads (JSON {} unless it reads only another). */
function send(op: Operation, token: string): Promise<HttpResult> {
  if (op.method === 'GET' || op.method === 'DELETE') return app.request(op.method, concrete(op.template), { token });
  const other = op.mediaTypes.length > 0 && !op.mediaTypes.some((t) => t === 'application/json' || t.endsWith('+json')) ? op.mediaTypes[0] : undefined;
  if (other !== undefined) return app.request(op.method, concrete(op.template), { token, rawBody: '\n', headers: { 'content-type': other } });
  return app.request(op.method, concrete(op.template), { token, body: {} });
}

describe('the widget allowlist against the OpenAPI document', () => {
  it('answers 403 forbidden to a ddw_ token on every bearer route it does not list', async () => {
    const { token } = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
    const closed = operations.filter((op) => isTenantRoute(op) && !widgetMayCall(op.method, op.template));
    // Management routes are among them: the walk is not vacuous.
    expect(closed.map((op) => `${op.method} ${op.template}`)).toEqual(
      expect.arrayContaining(['GET /v1/api_keys', 'POST /v1/api_keys', 'GET /v1/call_attempts', 'POST /v1/widget_tokens', 'POST /v1/suppressions/import']),
    );
    const refusedOtherwise: string[] = [];
    for (const op of closed) {
      const res = await send(op, token);
      if (res.status !== 403 || res.body?.error?.code !== 'forbidden') refusedOtherwise.push(`${op.method} ${op.template}: ${res.status} ${res.body?.error?.code}`);
    }
    expect(refusedOtherwise).toEqual([]);
  });

  it('lets every listed route run (whatever the route itself then answers)', async () => {
    const { token } = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
    const open = operations.filter((op) => isTenantRoute(op) && widgetMayCall(op.method, op.template));
    expect(open.length).toBe(WIDGET_ALLOWLIST.length);
    const stopped: string[] = [];
    for (const op of open) {
      const res = await send(op, token);
      if (res.status === 401 || res.body?.error?.message === ALLOWLIST_REFUSAL) stopped.push(`${op.method} ${op.template}: ${res.status}`);
    }
    expect(stopped).toEqual([]);
  });

  it('lists only routes the document has (no stale entries)', () => {
    const documented = new Set(operations.map((op) => `${op.method} ${shape(op.template)}`));
    const stale = WIDGET_ALLOWLIST.map((r) => `${r.method} ${shape(r.path)}`).filter((entry) => !documented.has(entry));
    expect(stale).toEqual([]);
    for (const entry of WIDGET_ALLOWLIST) expect(isTenantRoute({ method: entry.method, template: entry.path, mediaTypes: [] })).toBe(true);
  });

  it('answers 401 to a revoked or expired ddw_ token, on listed and unlisted routes alike', async () => {
    const revoked = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
    const expired = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
    for (const t of [revoked, expired]) expect((await app.request('GET', '/v1/me', { token: t.token })).status).toBe(200);
    await withTenantSql(app.deps.db, tenant.tenantId, async (sql) => {
      await sql.query('UPDATE widget_tokens SET revoked_at = now() WHERE id = $1', [revoked.id]);
      await sql.query(`UPDATE widget_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.id]);
    });
    for (const t of [revoked, expired]) {
      for (const [method, path] of [['GET', '/v1/me'], ['GET', '/v1/calls'], ['GET', '/v1/api_keys'], ['POST', '/v1/ws/ticket']] as const) {
        const res = await app.request(method, path, { token: t.token });
        expect({ path, status: res.status, code: res.body?.error?.code }).toEqual({ path, status: 401, code: 'unauthorized' });
      }
    }
  });
});
