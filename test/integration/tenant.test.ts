import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import {
  ADMIN_TOKEN,
  createUserSession,
  provisionTenant,
  startTestApp,
  uniqueName,
  type HttpResult,
  type ProvisionedTenant,
  type TestApp,
} from '../helpers/harness';

const USER_FIELDS = ['id', 'email', 'name', 'status', 'role', 'password_updated_at', 'last_login_at', 'created_at', 'updated_at'].sort();

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

describe('tenant routes (/v1/me, /v1/tenant, /v1/tenants)', () => {
  let app: TestApp;
  const auditRows = (tenantId: string, action: string) =>
    withTenant(app.deps.db, tenantId, (tx) => tx.auditLog.findMany({ where: { action }, orderBy: [{ occurredAt: 'asc' }, { lane: 'asc' }, { seq: 'asc' }] }));
  const adminRead = async (tenantId: string) =>
    (await app.request('GET', `/v1/admin/tenants/${tenantId}`, { token: ADMIN_TOKEN })).body.tenant;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  /** A well-formed credential of each kind that no tenant owns. */
  const unknownTokens = () => [`dd_${'A'.repeat(43)}`, `ddu_${'B'.repeat(43)}`, `ddw_${'C'.repeat(43)}`];

  async function expectUnauthorizedVariants(method: string, path: string, body?: unknown) {
    const tenant = await provisionTenant(app);
    const variants: (Record<string, string> | undefined)[] = [
      undefined,
      { authorization: '' },
      { authorization: 'Bearer' },
      { authorization: `Basic ${tenant.apiKey}` },
      { authorization: `Bearer ${tenant.apiKey} extra` },
      { authorization: `Bearer ${tenant.apiKey}x` },
      { authorization: `Bearer ${tenant.apiKey.slice(0, -1)}` },
      { authorization: `Bearer ${tenant.apiKey.replace('dd_', 'xx_')}` },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...unknownTokens().map((t) => ({ authorization: `Bearer ${t}` })),
    ];
    const bodies = new Set<string>();
    for (const headers of variants) {
      const res = await app.request(method, path, { headers, body });
      expectError(res, 401, 'unauthorized');
      bodies.add(res.text);
    }
    expect(bodies.size).toBe(1);
    return tenant;
  }

  describe('GET /v1/me', () => {
    it('answers {tenant} only for a dd_ key', async () => {
      const tenant = await provisionTenant(app);
      const res = await app.request('GET', '/v1/me', { token: tenant.apiKey });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['tenant']);
      expect(res.body.tenant).toEqual(await adminRead(tenant.tenantId));
      expect(res.headers['x-request-id']).toBeTruthy();
    });

    it('shows the operator-set wrap-up cap and plan status', async () => {
      const tenant = await provisionTenant(app, { agent_wrap_up_seconds: 30, plan_status: 'past_due' });
      const res = await app.request('GET', '/v1/me', { token: tenant.apiKey });
      expect(res.body.tenant).toMatchObject({ agent_wrap_up_seconds: 30, plan_status: 'past_due' });
      const listed = await app.request('GET', '/v1/tenants', { token: tenant.apiKey });
      expect(listed.body.tenants).toEqual([res.body.tenant]);
    });

    it('answers {tenant, user} for a ddu_ session, without any secret', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      const res = await app.request('GET', '/v1/me', { token: session.token });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['tenant', 'user']);
      expect(res.body.tenant.id).toBe(tenant.tenantId);
      expect(Object.keys(res.body.user).sort()).toEqual(USER_FIELDS);
      expect(res.body.user).toMatchObject({ id: session.userId, email: session.email, status: 'active', role: 'account_admin' });
      expect(res.body.user.last_login_at).toEqual(expect.any(String));
      expect(res.text).not.toMatch(/hash|password"/i);
    });

    it('answers 401 for missing, malformed, unknown and revoked credentials', async () => {
      const tenant = await expectUnauthorizedVariants('GET', '/v1/me');
      const session = await createUserSession(app, tenant);
      // Revoked: a second key revokes the first.
      const minted = await app.request('POST', '/v1/api_keys', { token: tenant.apiKey, body: { label: 'second' } });
      const keys = await app.request('GET', '/v1/api_keys', { token: minted.body.token });
      const first = keys.body.api_keys.find((k: { id: string }) => k.id !== minted.body.api_key.id);
      expect((await app.request('DELETE', `/v1/api_keys/${first.id}`, { token: minted.body.token })).status).toBe(200);
      expectError(await app.request('GET', '/v1/me', { token: tenant.apiKey }), 401, 'unauthorized');
      // Logged-out session.
      expect((await app.request('GET', '/v1/me', { token: session.token })).status).toBe(200);
      expect((await app.request('POST', '/v1/auth/logout', { token: session.token })).status).toBe(204);
      expectError(await app.request('GET', '/v1/me', { token: session.token }), 401, 'unauthorized');
    });

    it('answers 403 forbidden for dd_ and ddu_ credentials of a suspended tenant', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
      expectError(await app.request('GET', '/v1/me', { token: tenant.apiKey }), 403, 'forbidden');
      expectError(await app.request('GET', '/v1/me', { token: session.token }), 403, 'forbidden');
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/reactivate`, { token: ADMIN_TOKEN });
      expect((await app.request('GET', '/v1/me', { token: tenant.apiKey })).status).toBe(200);
      expect((await app.request('GET', '/v1/me', { token: session.token })).status).toBe(200);
    });
  });

  describe('PATCH /v1/tenant', () => {
    it('renames the tenant with a dd_ key and records tenant.renamed', async () => {
      const tenant = await provisionTenant(app);
      const before = await adminRead(tenant.tenantId);
      const name = uniqueName('Renamed Co');
      const res = await app.request('PATCH', '/v1/tenant', { token: tenant.apiKey, body: { name: `  ${name} ` } });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['tenant']);
      expect(res.body.tenant).toEqual({ ...before, name, updated_at: expect.any(String) });
      expect(await adminRead(tenant.tenantId)).toEqual(res.body.tenant);

      const keys = await app.request('GET', '/v1/api_keys', { token: tenant.apiKey });
      const rows = await auditRows(tenant.tenantId, 'tenant.renamed');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ actorType: 'api_key', actorId: keys.body.api_keys[0].id, subjectType: 'tenant', subjectId: tenant.tenantId });
    });

    it('renames with a ddu_ session, recording the user as actor', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      const name = uniqueName('Session Rename');
      const res = await app.request('PATCH', '/v1/tenant', { token: session.token, body: { name } });
      expect(res.status).toBe(200);
      expect(res.body.tenant.name).toBe(name);
      const rows = await auditRows(tenant.tenantId, 'tenant.renamed');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ actorType: 'user', actorId: session.userId });
    });

    it('ignores every key other than name', async () => {
      const tenant = await provisionTenant(app);
      const before = await adminRead(tenant.tenantId);
      const name = uniqueName('Only Name');
      const res = await app.request('PATCH', '/v1/tenant', {
        token: tenant.apiKey,
        body: {
          name,
          id: randomUUID(),
          status: 'suspended',
          tier: 'enterprise',
          voice_ai_enabled: true,
          seats: 999,
          human_initiated_enabled: true,
          ai_max_call_seconds: 5,
          max_cps: 1000,
          retention_months: 1,
          agent_wrap_up_seconds: 600,
          plan_status: 'cancelled',
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.tenant).toEqual({ ...before, name, updated_at: expect.any(String) });
      expect(await adminRead(tenant.tenantId)).toEqual(res.body.tenant);
    });

    it('answers 409 conflict for another tenant’s name, case-insensitively', async () => {
      const a = await provisionTenant(app);
      const b = await provisionTenant(app);
      for (const name of [a.name, a.name.toUpperCase(), ` ${a.name} `]) {
        const res = await app.request('PATCH', '/v1/tenant', { token: b.apiKey, body: { name } });
        expectError(res, 409, 'conflict');
      }
      expect((await adminRead(b.tenantId)).name).toBe(b.name);
      // Its own name in another case is fine.
      const own = await app.request('PATCH', '/v1/tenant', { token: b.apiKey, body: { name: b.name.toUpperCase() } });
      expect(own.status).toBe(200);
    });

    it('answers 422 for a blank or overlong name and changes nothing', async () => {
      const tenant = await provisionTenant(app);
      for (const name of ['', '    ', 'n'.repeat(201)]) {
        const res = await app.request('PATCH', '/v1/tenant', { token: tenant.apiKey, body: { name } });
        expectError(res, 422, 'unprocessable');
        expect(res.body.error.message).toContain('name');
      }
      expect((await adminRead(tenant.tenantId)).name).toBe(tenant.name);
      expect(await auditRows(tenant.tenantId, 'tenant.renamed')).toHaveLength(0);
    });

    it('answers 400 for malformed JSON, a missing name and a non-string name; 415 for text/plain', async () => {
      const tenant = await provisionTenant(app);
      const malformed = await app.request('PATCH', '/v1/tenant', {
        token: tenant.apiKey,
        rawBody: '{"name":',
        headers: { 'content-type': 'application/json' },
      });
      expectError(malformed, 400, 'bad_request');
      for (const body of [{}, { name: 5 }, { name: null }, { tier: 'growth' }]) {
        const res = await app.request('PATCH', '/v1/tenant', { token: tenant.apiKey, body });
        expectError(res, 400, 'bad_request');
        expect(res.body.error.message).toContain('name');
      }
      const text = await app.request('PATCH', '/v1/tenant', {
        token: tenant.apiKey,
        rawBody: JSON.stringify({ name: uniqueName('x') }),
        headers: { 'content-type': 'text/plain' },
      });
      expectError(text, 415, 'unsupported_media_type');
      expect((await adminRead(tenant.tenantId)).name).toBe(tenant.name);
    });

    it('answers 401 without a valid credential and 403 for a suspended tenant', async () => {
      const tenant = await expectUnauthorizedVariants('PATCH', '/v1/tenant', { name: uniqueName('nope') });
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
      const res = await app.request('PATCH', '/v1/tenant', { token: tenant.apiKey, body: { name: uniqueName('nope') } });
      expectError(res, 403, 'forbidden');
      expect((await adminRead(tenant.tenantId)).name).toBe(tenant.name);
    });
  });

  describe('GET /v1/tenants and /v1/tenants/{id}', () => {
    let a: ProvisionedTenant;
    let b: ProvisionedTenant;
    beforeAll(async () => {
      a = await provisionTenant(app);
      b = await provisionTenant(app);
    });

    it('lists exactly the own tenant', async () => {
      for (const t of [a, b]) {
        const res = await app.request('GET', '/v1/tenants', { token: t.apiKey });
        expect(res.status).toBe(200);
        expect(Object.keys(res.body)).toEqual(['tenants']);
        expect(res.body.tenants).toHaveLength(1);
        expect(res.body.tenants[0]).toEqual(await adminRead(t.tenantId));
      }
      const session = await createUserSession(app, a);
      const viaSession = await app.request('GET', '/v1/tenants', { token: session.token });
      expect(viaSession.body.tenants.map((t: { id: string }) => t.id)).toEqual([a.tenantId]);
    });

    it('reads the own tenant by id (any case)', async () => {
      for (const id of [a.tenantId, a.tenantId.toUpperCase()]) {
        const res = await app.request('GET', `/v1/tenants/${id}`, { token: a.apiKey });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ tenant: await adminRead(a.tenantId) });
      }
    });

    it('answers one identical 404 for another tenant’s id, an unknown id and a malformed id', async () => {
      const texts = new Set<string>();
      for (const id of [b.tenantId, randomUUID(), 'not-a-uuid', '1', `${a.tenantId}0`]) {
        const res = await app.request('GET', `/v1/tenants/${id}`, { token: a.apiKey });
        expectError(res, 404, 'not_found');
        texts.add(res.text);
      }
      // Same from b's side for a's id.
      const reverse = await app.request('GET', `/v1/tenants/${a.tenantId}`, { token: b.apiKey });
      expectError(reverse, 404, 'not_found');
      texts.add(reverse.text);
      expect(texts.size).toBe(1);
    });

    it('answers 401 without a credential and 403 for a suspended tenant', async () => {
      expectError(await app.request('GET', '/v1/tenants'), 401, 'unauthorized');
      expectError(await app.request('GET', `/v1/tenants/${a.tenantId}`), 401, 'unauthorized');
      expectError(await app.request('GET', `/v1/tenants/${a.tenantId}`, { token: unknownTokens()[0] }), 401, 'unauthorized');
      const c = await provisionTenant(app);
      await app.request('POST', `/v1/admin/tenants/${c.tenantId}/suspend`, { token: ADMIN_TOKEN });
      expectError(await app.request('GET', '/v1/tenants', { token: c.apiKey }), 403, 'forbidden');
      expectError(await app.request('GET', `/v1/tenants/${c.tenantId}`, { token: c.apiKey }), 403, 'forbidden');
    });
  });
});
