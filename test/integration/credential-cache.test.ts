import { withTenantSql } from '../../src/lib/tenancy';
import { ADMIN_TOKEN, createUserSession, provisionTenant, startTestApp, type TestApp } from '../helpers/harness';

/**
 * Two API processes (two apps, each with its own credential cache) over one database: a write on
 * one is honoured by that process on the next request, and by the other within a second.
 */
describe('credential cache (CREDENTIAL_CACHE_TTL_MS)', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    [a, b] = await Promise.all([startTestApp(), startTestApp()]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  const revokeInDatabase = (app: TestApp, tenantId: string, keyId: string) =>
    withTenantSql(app.deps.db, tenantId, (sql) => sql.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1::uuid', [keyId]));

  /** Milliseconds until `path` answers `status` with `token` on `app`, polling every 25 ms for 3 s. */
  async function msUntil(app: TestApp, token: string, status: number, path = '/v1/me'): Promise<number> {
    const start = Date.now();
    for (;;) {
      const res = await app.request('GET', path, { token });
      if (res.status === status) return Date.now() - start;
      if (Date.now() - start > 3000) throw new Error(`still ${res.status} after 3 s`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('keeps a resolved key: a revocation written outside any API process holds within a second', async () => {
    const t = await provisionTenant(a);
    const minted = await a.request('POST', '/v1/api_keys', { token: t.apiKey, body: { label: 'cached' } });
    expect((await b.request('GET', '/v1/me', { token: minted.body.token })).status).toBe(200);
    // What a worker or the operator CLI would write: no request of either API process sees it.
    await revokeInDatabase(a, t.tenantId, minted.body.api_key.id);
    const kept = await b.request('GET', '/v1/me', { token: minted.body.token });
    const waited = await msUntil(b, minted.body.token, 401);
    // Kept (no lookup) right after the write, refused once the entry's second is over.
    expect(kept.status).toBe(200);
    expect(waited).toBeLessThanOrEqual(1100);
  });

  it('a key revoked through one process is refused by it on the very next request, by the other within a second', async () => {
    const t = await provisionTenant(a);
    const minted = await a.request('POST', '/v1/api_keys', { token: t.apiKey, body: { label: 'revoke-me' } });
    const key: string = minted.body.token;
    expect((await a.request('GET', '/v1/me', { token: key })).status).toBe(200);
    expect((await b.request('GET', '/v1/me', { token: key })).status).toBe(200);
    expect((await a.request('DELETE', `/v1/api_keys/${minted.body.api_key.id}`, { token: t.apiKey })).status).toBe(200);
    expect((await a.request('GET', '/v1/me', { token: key })).status).toBe(401);
    expect(await msUntil(b, key, 401)).toBeLessThanOrEqual(1100);
  });

  it('a logged-out session is refused by its process at once', async () => {
    const t = await provisionTenant(a);
    const { token: session } = await createUserSession(a, t);
    expect((await a.request('GET', '/v1/me', { token: session })).status).toBe(200);
    expect((await a.request('POST', '/v1/auth/logout', { token: session })).status).toBe(204);
    expect((await a.request('GET', '/v1/me', { token: session })).status).toBe(401);
  });

  it('a tenant the operator suspends is refused by every process within a second', async () => {
    const t = await provisionTenant(a);
    expect((await a.request('GET', '/v1/me', { token: t.apiKey })).status).toBe(200);
    expect((await b.request('GET', '/v1/me', { token: t.apiKey })).status).toBe(200);
    const suspended = await a.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN });
    expect(suspended.status).toBe(200);
    expect((await a.request('GET', '/v1/me', { token: t.apiKey })).status).toBe(403);
    expect(await msUntil(b, t.apiKey, 403)).toBeLessThanOrEqual(1100);
  });

  const renameInDatabase = (app: TestApp, tenantId: string, name: string) =>
    withTenantSql(app.deps.db, tenantId, (sql) => sql.query('UPDATE tenants SET name = $1 WHERE id = $2::uuid', [name, tenantId]));

  /** Milliseconds until /v1/me on `app` names the tenant `name`, polling every 25 ms for 3 s. */
  async function msUntilNamed(app: TestApp, token: string, name: string): Promise<number> {
    const start = Date.now();
    for (;;) {
      const res = await app.request('GET', '/v1/me', { token });
      if (res.body.tenant?.name === name) return Date.now() - start;
      if (Date.now() - start > 3000) throw new Error(`still ${JSON.stringify(res.body.tenant?.name)} after 3 s`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('keeps the tenant /v1/me answers with: a change written outside any API process shows within a second', async () => {
    const t = await provisionTenant(a);
    const before = (await b.request('GET', '/v1/me', { token: t.apiKey })).body.tenant.name;
    // What a worker (a billing run's plan_status) or the operator CLI would write.
    await renameInDatabase(a, t.tenantId, `${before}-renamed`);
    const kept = await b.request('GET', '/v1/me', { token: t.apiKey });
    const waited = await msUntilNamed(b, t.apiKey, `${before}-renamed`);
    expect(kept.body.tenant.name).toBe(before);
    expect(waited).toBeLessThanOrEqual(1100);
  });

  it('a rename through one process shows on its very next /v1/me, on the other within a second', async () => {
    const t = await provisionTenant(a);
    const before = (await a.request('GET', '/v1/me', { token: t.apiKey })).body.tenant.name;
    expect((await b.request('GET', '/v1/me', { token: t.apiKey })).body.tenant.name).toBe(before);
    const renamed = await a.request('PATCH', '/v1/tenant', { token: t.apiKey, body: { name: `${before}-patched` } });
    expect(renamed.status).toBe(200);
    expect((await a.request('GET', '/v1/me', { token: t.apiKey })).body.tenant.name).toBe(`${before}-patched`);
    expect(await msUntilNamed(b, t.apiKey, `${before}-patched`)).toBeLessThanOrEqual(1100);
  });

  it('an operator change shows on that process at once', async () => {
    const t = await provisionTenant(a);
    expect((await a.request('GET', '/v1/me', { token: t.apiKey })).body.tenant.agent_wrap_up_seconds).not.toBe(45);
    const patched = await a.request('PATCH', `/v1/admin/tenants/${t.tenantId}`, { token: ADMIN_TOKEN, body: { agent_wrap_up_seconds: 45 } });
    expect(patched.status).toBe(200);
    expect((await a.request('GET', '/v1/me', { token: t.apiKey })).body.tenant.agent_wrap_up_seconds).toBe(45);
  });

  it('with CREDENTIAL_CACHE_TTL_MS=0 every request is judged by the database', async () => {
    const c = await startTestApp({ CREDENTIAL_CACHE_TTL_MS: '0' });
    try {
      const t = await provisionTenant(c);
      const minted = await c.request('POST', '/v1/api_keys', { token: t.apiKey, body: { label: 'uncached' } });
      expect((await c.request('GET', '/v1/me', { token: minted.body.token })).status).toBe(200);
      await revokeInDatabase(c, t.tenantId, minted.body.api_key.id);
      expect((await c.request('GET', '/v1/me', { token: minted.body.token })).status).toBe(401);
      await renameInDatabase(c, t.tenantId, 'renamed-uncached');
      expect((await c.request('GET', '/v1/me', { token: t.apiKey })).body.tenant.name).toBe('renamed-uncached');
      expect(c.deps.credentials?.size).toBe(0);
      expect(c.deps.tenantRows?.size).toBe(0);
    } finally {
      await c.close();
    }
  });
});
