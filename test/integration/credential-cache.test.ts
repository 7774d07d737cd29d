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

  /**
   * Polls `app` with `token` every 25 ms until `fresh(answer)` (failing after 3 s) and answers how
   * long after `since` (the write's completion) the last stale answer was asked for, 0 when none
   * was. A stale answer comes from an entry cached before the write, which expires within the
   * cache's second; timing each request when it is sent, not when it is answered, keeps a loaded
   * machine's slow requests out of the figure.
   */
  async function staleFor(app: TestApp, token: string, since: number, fresh: (res: { status: number; body: any }) => boolean): Promise<number> {
    let lastStale: number | null = null;
    for (;;) {
      const sent = Date.now();
      const res = await app.request('GET', '/v1/me', { token });
      if (fresh(res)) return lastStale === null ? 0 : lastStale - since;
      lastStale = sent;
      if (Date.now() - since > 3000) throw new Error(`still ${res.status} ${JSON.stringify(res.body.tenant?.name)} after 3 s`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  const answers = (status: number) => (res: { status: number }) => res.status === status;
  const names = (name: string) => (res: { body: any }) => res.body.tenant?.name === name;

  it('keeps a resolved key: a revocation written outside any API process holds within a second', async () => {
    const t = await provisionTenant(a);
    const minted = await a.request('POST', '/v1/api_keys', { token: t.apiKey, body: { label: 'cached' } });
    expect((await b.request('GET', '/v1/me', { token: minted.body.token })).status).toBe(200);
    // What a worker or the operator CLI would write: no request of either API process sees it.
    await revokeInDatabase(a, t.tenantId, minted.body.api_key.id);
    const since = Date.now();
    const kept = await b.request('GET', '/v1/me', { token: minted.body.token });
    const stale = await staleFor(b, minted.body.token, since, answers(401));
    // Kept (no lookup) right after the write, refused once the entry's second is over.
    expect(kept.status).toBe(200);
    expect(stale).toBeLessThanOrEqual(1000);
  });

  it('a key revoked through one process is refused by it on the very next request, by the other within a second', async () => {
    const t = await provisionTenant(a);
    const minted = await a.request('POST', '/v1/api_keys', { token: t.apiKey, body: { label: 'revoke-me' } });
    const key: string = minted.body.token;
    expect((await a.request('GET', '/v1/me', { token: key })).status).toBe(200);
    expect((await b.request('GET', '/v1/me', { token: key })).status).toBe(200);
    expect((await a.request('DELETE', `/v1/api_keys/${minted.body.api_key.id}`, { token: t.apiKey })).status).toBe(200);
    const since = Date.now();
    expect((await a.request('GET', '/v1/me', { token: key })).status).toBe(401);
    expect(await staleFor(b, key, since, answers(401))).toBeLessThanOrEqual(1000);
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
    const since = Date.now();
    expect((await a.request('GET', '/v1/me', { token: t.apiKey })).status).toBe(403);
    expect(await staleFor(b, t.apiKey, since, answers(403))).toBeLessThanOrEqual(1000);
  });

  const renameInDatabase = (app: TestApp, tenantId: string, name: string) =>
    withTenantSql(app.deps.db, tenantId, (sql) => sql.query('UPDATE tenants SET name = $1 WHERE id = $2::uuid', [name, tenantId]));

  it('keeps the tenant /v1/me answers with: a change written outside any API process shows within a second', async () => {
    const t = await provisionTenant(a);
    const before = (await b.request('GET', '/v1/me', { token: t.apiKey })).body.tenant.name;
    // What a worker (a billing run's plan_status) or the operator CLI would write.
    await renameInDatabase(a, t.tenantId, `${before}-renamed`);
    const since = Date.now();
    const kept = await b.request('GET', '/v1/me', { token: t.apiKey });
    const stale = await staleFor(b, t.apiKey, since, names(`${before}-renamed`));
    expect(kept.body.tenant.name).toBe(before);
    expect(stale).toBeLessThanOrEqual(1000);
  });

  it('a rename through one process shows on its very next /v1/me, on the other within a second', async () => {
    const t = await provisionTenant(a);
    const before = (await a.request('GET', '/v1/me', { token: t.apiKey })).body.tenant.name;
    expect((await b.request('GET', '/v1/me', { token: t.apiKey })).body.tenant.name).toBe(before);
    const renamed = await a.request('PATCH', '/v1/tenant', { token: t.apiKey, body: { name: `${before}-patched` } });
    expect(renamed.status).toBe(200);
    const since = Date.now();
    expect((await a.request('GET', '/v1/me', { token: t.apiKey })).body.tenant.name).toBe(`${before}-patched`);
    expect(await staleFor(b, t.apiKey, since, names(`${before}-patched`))).toBeLessThanOrEqual(1000);
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
