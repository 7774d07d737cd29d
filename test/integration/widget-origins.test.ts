import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { ADMIN_TOKEN, createUserSession, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';

const MiB = 1024 * 1024;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FIELDS = ['id', 'origin', 'label', 'enabled', 'disabled_at', 'created_at', 'updated_at'];

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

/** A host no other test (or earlier run) uses: enabled origins are unique platform-wide. */
const uniqueHost = (prefix = 'crm') => `${prefix}-${randomUUID().slice(0, 8)}.example`;

describe('widget origins', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;
  let other: ProvisionedTenant;

  const create = (t: ProvisionedTenant, body: unknown) => app.request('POST', '/v1/widget_origins', { token: t.apiKey, body });
  const created = async (t: ProvisionedTenant, origin = `https://${uniqueHost()}`, label?: string) => {
    const res = await create(t, label === undefined ? { origin } : { origin, label });
    expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
    return res.body.widget_origin;
  };
  const disable = (t: ProvisionedTenant, id: string) => app.request('DELETE', `/v1/widget_origins/${id}`, { token: t.apiKey });
  const enable = (t: ProvisionedTenant, id: string) => app.request('POST', `/v1/widget_origins/${id}/enable`, { token: t.apiKey });
  const list = (t: ProvisionedTenant) => app.request('GET', '/v1/widget_origins', { token: t.apiKey });
  const audits = (t: ProvisionedTenant, id: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findMany({ where: { subjectType: 'widget_origin', subjectId: id }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }));
  const countOrigins = (t: ProvisionedTenant) => withTenant(app.deps.db, t.tenantId, (tx) => tx.widgetOrigin.count());

  beforeAll(async () => {
    app = await startTestApp();
    tenant = await provisionTenant(app);
    other = await provisionTenant(app);
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/widget_origins', () => {
    it('registers the canonical origin, enabled, with the WidgetOrigin fields; audited', async () => {
      const host = uniqueHost();
      const res = await create(tenant, { origin: `HTTPS://${host.toUpperCase()}:443/`, label: '  Main CRM ' });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['widget_origin']);
      expect(Object.keys(res.body.widget_origin)).toEqual(FIELDS);
      expect(res.body.widget_origin).toEqual({
        id: expect.stringMatching(UUID_RE),
        origin: `https://${host}`,
        label: 'Main CRM',
        enabled: true,
        disabled_at: null,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });
      const rows = await audits(tenant, res.body.widget_origin.id);
      expect(rows.map((r) => r.action)).toEqual(['widget_origin.created']);
      expect(rows[0]).toMatchObject({ actorType: 'api_key' });
      expect(rows[0]!.payload).toEqual({ origin: `https://${host}`, label: 'Main CRM' });
    });

    it('keeps a non-default port, takes http for localhost and 127.0.0.1, and defaults the label to empty', async () => {
      const t = await provisionTenant(app);
      const host = uniqueHost();
      expect(await created(t, `https://${host}:8443`)).toMatchObject({ origin: `https://${host}:8443`, label: '' });
      // Loopback dev origins are platform-wide too: pick ports nobody else uses.
      const port = 20000 + Math.floor(Math.random() * 40000);
      expect(await created(t, `http://LOCALHOST:${port}`)).toMatchObject({ origin: `http://localhost:${port}` });
      expect(await created(t, `http://127.0.0.1:${port}/`)).toMatchObject({ origin: `http://127.0.0.1:${port}` });
    });

    it('accepts a ddu_ dashboard session', async () => {
      const session = await createUserSession(app, tenant);
      const res = await app.request('POST', '/v1/widget_origins', { token: session.token, body: { origin: `https://${uniqueHost()}` } });
      expect(res.status).toBe(201);
      expect((await audits(tenant, res.body.widget_origin.id))[0]).toMatchObject({ actorType: 'user', actorId: session.userId });
    });

    it.each([
      ['plain http to a public host', `http://${uniqueHost()}`],
      ['a path', `https://${uniqueHost()}/widget`],
      ['a query', `https://${uniqueHost()}/?x=1`],
      ['a fragment', `https://${uniqueHost()}#top`],
      ['credentials', `https://u:p@${uniqueHost()}`],
      ['another scheme', `ftp://${uniqueHost()}`],
      ['no scheme', uniqueHost()],
      ['an IPv6 literal', 'https://[::1]'],
      ['an empty string', ''],
      ['the opaque origin', 'null'],
    ])('refuses %s with 422 unprocessable and writes nothing', async (_label, origin) => {
      const before = await countOrigins(tenant);
      expectError(await create(tenant, { origin }), 422, 'unprocessable', /origin/);
      expect(await countOrigins(tenant)).toBe(before);
    });

    it('refuses a label over 200 characters with 422', async () => {
      expectError(await create(tenant, { origin: `https://${uniqueHost()}`, label: 'x'.repeat(201) }), 422, 'unprocessable', /label/);
      expect(await created(tenant, `https://${uniqueHost()}`, 'y'.repeat(200))).toMatchObject({ label: 'y'.repeat(200) });
    });

    it('is 409 when the tenant already has the origin, enabled or disabled, in any spelling', async () => {
      const host = uniqueHost();
      const first = await created(tenant, `https://${host}`);
      expectError(await create(tenant, { origin: `https://${host}` }), 409, 'conflict', /already registered/);
      expectError(await create(tenant, { origin: `https://${host.toUpperCase()}:443` }), 409, 'conflict');
      expect((await disable(tenant, first.id)).status).toBe(200);
      expectError(await create(tenant, { origin: `https://${host}/` }), 409, 'conflict', /enable it/);
    });

    it('is 409 when another tenant has the origin enabled, and fine once that tenant disabled it', async () => {
      const origin = `https://${uniqueHost()}`;
      const theirs = await created(other, origin);
      const before = await countOrigins(tenant);
      expectError(await create(tenant, { origin }), 409, 'conflict', /another tenant/);
      expect(await countOrigins(tenant)).toBe(before);
      expect((await disable(other, theirs.id)).status).toBe(200);
      expect(await created(tenant, origin)).toMatchObject({ origin, enabled: true });
    });

    it('lets only one of concurrent registrations of an origin by two tenants win', async () => {
      const origin = `https://${uniqueHost()}`;
      const t = await provisionTenant(app);
      const results = await Promise.all([create(tenant, { origin }), create(t, { origin }), create(tenant, { origin }), create(t, { origin })]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    });

    it('names the conflict right when concurrent registrations in one tenant race', async () => {
      const origin = `https://${uniqueHost()}`;
      const results = await Promise.all(Array.from({ length: 4 }, () => create(tenant, { origin })));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.message).toMatch(/already registered in the tenant/);
    });

    it.each([
      ['a missing origin', { label: 'x' }, /origin.*required/],
      ['a non-string origin', { origin: 42 }, /origin/],
      ['a non-string label', { origin: 'https://a.example', label: 7 }, /label/],
      ['an unknown key', { origin: 'https://a.example', tenant_id: randomUUID() }, /tenant_id/],
    ])('answers 400 bad_request for %s', async (_label, body, message) => {
      expectError(await create(tenant, body), 400, 'bad_request', message);
    });

    it('answers 400 for malformed JSON, 415 for a non-JSON body and 413 for a body over 8 MiB', async () => {
      const post = (headers: Record<string, string>, rawBody?: string) => app.request('POST', '/v1/widget_origins', { token: tenant.apiKey, rawBody, headers });
      expectError(await post({ 'content-type': 'application/json' }, '{"origin":'), 400, 'bad_request');
      expectError(await post({ 'content-type': 'text/plain' }, '{}'), 415, 'unsupported_media_type');
      expectError(await post({ 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) }), 413, 'payload_too_large');
    });
  });

  describe('GET /v1/widget_origins', () => {
    it("lists every origin of the tenant, disabled ones included, oldest first, and none of another tenant's", async () => {
      const t = await provisionTenant(app);
      const a = await created(t);
      const b = await created(t);
      const c = await created(t);
      await disable(t, b.id);
      await created(other);
      const res = await list(t);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['widget_origins']);
      expect(res.body.widget_origins.map((o: { id: string }) => o.id)).toEqual([a.id, b.id, c.id]);
      expect(res.body.widget_origins[1]).toMatchObject({ enabled: false, disabled_at: expect.stringMatching(ISO_RE) });
      expect((await list(await provisionTenant(app))).body).toEqual({ widget_origins: [] });
    });
  });

  describe('DELETE /v1/widget_origins/{id} and POST /v1/widget_origins/{id}/enable', () => {
    it('disables (never deletes) idempotently, and enables again idempotently; each change audited once', async () => {
      const o = await created(tenant);
      const off = await disable(tenant, o.id);
      expect(off.status).toBe(200);
      expect(Object.keys(off.body)).toEqual(['widget_origin']);
      expect(off.body.widget_origin).toEqual({ ...o, enabled: false, disabled_at: expect.stringMatching(ISO_RE), updated_at: expect.stringMatching(ISO_RE) });
      const again = await disable(tenant, o.id);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(off.body);
      expect((await list(tenant)).body.widget_origins).toContainEqual(off.body.widget_origin);

      const on = await enable(tenant, o.id);
      expect(on.status).toBe(200);
      expect(on.body.widget_origin).toMatchObject({ id: o.id, origin: o.origin, enabled: true, disabled_at: null });
      const onAgain = await enable(tenant, o.id);
      expect(onAgain.status).toBe(200);
      expect(onAgain.body).toEqual(on.body);

      const rows = await audits(tenant, o.id);
      expect(rows.map((r) => r.action)).toEqual(['widget_origin.created', 'widget_origin.disabled', 'widget_origin.enabled']);
      expect(rows[1]!.payload).toEqual({ origin: o.origin });
    });

    it('is 409 to enable an origin another tenant has enabled meanwhile; the origin stays disabled', async () => {
      const origin = `https://${uniqueHost()}`;
      const mine = await created(tenant, origin);
      await disable(tenant, mine.id);
      await created(other, origin);
      expectError(await enable(tenant, mine.id), 409, 'conflict', /another tenant/);
      const row = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.widgetOrigin.findUniqueOrThrow({ where: { id: mine.id } }));
      expect(row.enabled).toBe(false);
      expect((await audits(tenant, mine.id)).map((r) => r.action)).toEqual(['widget_origin.created', 'widget_origin.disabled']);
    });

    it.each([
      ['an unknown id', () => randomUUID()],
      ['a malformed id', () => 'not-a-uuid'],
    ])('answers 404 for %s', async (_label, id) => {
      expectError(await disable(tenant, id()), 404, 'not_found');
      expectError(await enable(tenant, id()), 404, 'not_found');
    });

    it("answers 404 for another tenant's origin and leaves it untouched", async () => {
      const theirs = await created(other);
      expectError(await disable(tenant, theirs.id), 404, 'not_found');
      await disable(other, theirs.id);
      expectError(await enable(tenant, theirs.id), 404, 'not_found');
      expect((await audits(other, theirs.id)).map((r) => r.action)).toEqual(['widget_origin.created', 'widget_origin.disabled']);
    });
  });

  it('publishes the WidgetOrigin component in the OpenAPI document', async () => {
    const doc = (await app.request('GET', '/v1/openapi.json')).body;
    expect(Object.keys(doc.components.schemas.WidgetOrigin.properties)).toEqual(FIELDS);
    expect(doc.paths['/v1/widget_origins'].post.responses['201'].content['application/json'].schema.properties.widget_origin).toEqual({
      $ref: '#/components/schemas/WidgetOrigin',
    });
  });

  describe('credentials', () => {
    it('answers 401 without a bearer on every route', async () => {
      const id = randomUUID();
      for (const [method, path] of [
        ['GET', '/v1/widget_origins'],
        ['POST', '/v1/widget_origins'],
        ['DELETE', `/v1/widget_origins/${id}`],
        ['POST', `/v1/widget_origins/${id}/enable`],
      ] as const) {
        expectError(await app.request(method, path, { body: method === 'POST' ? { origin: 'https://a.example' } : undefined }), 401, 'unauthorized');
      }
    });

    it('answers 403 to a ddw_ widget token on every route and writes nothing', async () => {
      const o = await created(tenant);
      const { token } = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
      const before = await countOrigins(tenant);
      for (const [method, path, body] of [
        ['GET', '/v1/widget_origins', undefined],
        ['POST', '/v1/widget_origins', { origin: `https://${uniqueHost()}` }],
        ['DELETE', `/v1/widget_origins/${o.id}`, undefined],
        ['POST', `/v1/widget_origins/${o.id}/enable`, undefined],
      ] as const) {
        expectError(await app.request(method, path, { token, body }), 403, 'forbidden');
      }
      expect(await countOrigins(tenant)).toBe(before);
      expect((await list(tenant)).body.widget_origins).toContainEqual(o);
    });

    it('answers 403 to a suspended tenant', async () => {
      const t = await provisionTenant(app);
      const o = await created(t);
      expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN })).status).toBe(200);
      expectError(await list(t), 403, 'forbidden');
      expectError(await disable(t, o.id), 403, 'forbidden');
    });
  });
});
