import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { sha256Hex } from '../../src/lib/tokens';
import {
  ADMIN_TOKEN,
  createUserSession,
  provisionTenant,
  startTestApp,
  type HttpResult,
  type ProvisionedTenant,
  type TestApp,
} from '../helpers/harness';

const KEY_FIELDS = ['id', 'label', 'revoked_at', 'created_at'].sort();
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
const ids = (res: HttpResult) => res.body.api_keys.map((k: { id: string }) => k.id);

describe('API keys (/v1/api_keys)', () => {
  let app: TestApp;
  const mint = (token: string, body: unknown = { label: 'ci' }) => app.request('POST', '/v1/api_keys', { token, body });
  const auditRows = (tenantId: string, action: string) =>
    withTenant(app.deps.db, tenantId, (tx) => tx.auditLog.findMany({ where: { action }, orderBy: [{ occurredAt: 'asc' }, { lane: 'asc' }, { seq: 'asc' }] }));

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/api_keys', () => {
    it('mints a working dd_ key shown once; only its sha256 is stored', async () => {
      const tenant = await provisionTenant(app);
      const res = await mint(tenant.apiKey, { label: 'billing export' });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['api_key', 'token']);
      expect(Object.keys(res.body.api_key).sort()).toEqual(KEY_FIELDS);
      expect(res.body.api_key).toEqual({
        id: expect.stringMatching(UUID_RE),
        label: 'billing export',
        revoked_at: null,
        created_at: expect.stringMatching(ISO_RE),
      });
      const token: string = res.body.token;
      expect(token).toMatch(/^dd_[A-Za-z0-9_-]{43}$/);
      expect(token).not.toBe(tenant.apiKey);

      const me = await app.request('GET', '/v1/me', { token });
      expect(me.status).toBe(200);
      expect(me.body.tenant.id).toBe(tenant.tenantId);

      const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.apiKey.findUnique({ where: { id: res.body.api_key.id } }));
      expect(stored?.tokenHash).toBe(sha256Hex(token));
      expect(stored?.tokenHash).not.toContain(token.slice(3));

      // The list never shows the token or its hash.
      const list = await app.request('GET', '/v1/api_keys', { token });
      expect(list.text).not.toContain(token);
      expect(list.text).not.toContain(sha256Hex(token));
      expect(list.body.api_keys.find((k: { id: string }) => k.id === res.body.api_key.id)).toEqual(res.body.api_key);

      const rows = await auditRows(tenant.tenantId, 'api_key.created');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ actorType: 'api_key', subjectType: 'api_key', subjectId: res.body.api_key.id });
      expect(rows[0]!.actorId).toBe(ids(list)[0]);
    });

    it('defaults the label to empty without a body or with {}', async () => {
      const tenant = await provisionTenant(app);
      const noBody = await app.request('POST', '/v1/api_keys', { token: tenant.apiKey });
      expect(noBody.status).toBe(201);
      expect(noBody.body.api_key.label).toBe('');
      const empty = await mint(tenant.apiKey, {});
      expect(empty.status).toBe(201);
      expect(empty.body.api_key.label).toBe('');
      expect(empty.body.token).not.toBe(noBody.body.token);
    });

    it('mints with a ddu_ session, recording the user as actor', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      const res = await mint(session.token, { label: 'from dashboard' });
      expect(res.status).toBe(201);
      expect((await app.request('GET', '/v1/me', { token: res.body.token })).status).toBe(200);
      const rows = await auditRows(tenant.tenantId, 'api_key.created');
      expect(rows[0]).toMatchObject({ actorType: 'user', actorId: session.userId, subjectId: res.body.api_key.id });
    });

    it('answers 400 for malformed JSON, wrong types, an overlong label and unknown keys; 415 for text/plain', async () => {
      const tenant = await provisionTenant(app);
      const malformed = await app.request('POST', '/v1/api_keys', {
        token: tenant.apiKey,
        rawBody: '{"label": ',
        headers: { 'content-type': 'application/json' },
      });
      expectError(malformed, 400, 'bad_request');
      const cases: [string, unknown][] = [
        ['label', { label: 5 }],
        ['label', { label: null }],
        ['label', { label: 'x'.repeat(201) }],
        ['tenant_id', { label: 'x', tenant_id: randomUUID() }],
        ['token', { token: `dd_${'A'.repeat(43)}` }],
      ];
      for (const [field, body] of cases) {
        const res = await mint(tenant.apiKey, body);
        expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: 'bad_request' });
        expect(res.body.error.message).toContain(field);
      }
      const text = await app.request('POST', '/v1/api_keys', {
        token: tenant.apiKey,
        rawBody: '{"label":"x"}',
        headers: { 'content-type': 'text/plain' },
      });
      expectError(text, 415, 'unsupported_media_type');
      // Only the provisioning key exists.
      expect((await app.request('GET', '/v1/api_keys', { token: tenant.apiKey })).body.api_keys).toHaveLength(1);
    });

    it('answers 401 without a valid credential and 403 for a suspended tenant', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      for (const token of [null, 'dd_', `dd_${'W'.repeat(43)}`, `ddu_${'W'.repeat(43)}`, ADMIN_TOKEN]) {
        expectError(await app.request('POST', '/v1/api_keys', { token, body: { label: 'x' } }), 401, 'unauthorized');
        expectError(await app.request('GET', '/v1/api_keys', { token }), 401, 'unauthorized');
      }
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
      for (const token of [tenant.apiKey, session.token]) {
        expectError(await mint(token), 403, 'forbidden');
        expectError(await app.request('GET', '/v1/api_keys', { token }), 403, 'forbidden');
      }
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/reactivate`, { token: ADMIN_TOKEN });
      expect((await app.request('GET', '/v1/api_keys', { token: tenant.apiKey })).body.api_keys).toHaveLength(1);
    });
  });

  describe('GET /v1/api_keys', () => {
    let tenant: ProvisionedTenant;
    let all: string[];
    beforeAll(async () => {
      tenant = await provisionTenant(app);
      const first = await app.request('GET', '/v1/api_keys', { token: tenant.apiKey });
      all = ids(first);
      for (let i = 0; i < 6; i += 1) {
        const res = await mint(tenant.apiKey, { label: `key ${i}` });
        all.push(res.body.api_key.id);
      }
      // A revoked key stays listed.
      await app.request('DELETE', `/v1/api_keys/${all[3]}`, { token: tenant.apiKey });
    });

    it('lists every key, revoked ones included, oldest first', async () => {
      const res = await app.request('GET', '/v1/api_keys', { token: tenant.apiKey });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['api_keys', 'next_cursor']);
      expect(ids(res)).toEqual(all);
      expect(res.body.next_cursor).toBeNull();
      for (const key of res.body.api_keys) expect(Object.keys(key).sort()).toEqual(KEY_FIELDS);
      expect(res.body.api_keys[0].label).toBe('provisioning');
      expect(res.body.api_keys[3].revoked_at).toMatch(ISO_RE);
      expect(res.body.api_keys.filter((k: { revoked_at: string | null }) => k.revoked_at !== null)).toHaveLength(1);
    });

    it.each([1, 2, 3, 6, 7, 8])('walks every key exactly once with limit=%i', async (limit) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor ? `?cursor=${encodeURIComponent(cursor)}&limit=${limit}` : `?limit=${limit}`;
        const res = await app.request('GET', `/v1/api_keys${query}`, { token: tenant.apiKey });
        expect(res.status).toBe(200);
        expect(res.body.api_keys.length).toBeLessThanOrEqual(limit);
        seen.push(...ids(res));
        cursor = res.body.next_cursor;
        pages += 1;
        expect(pages).toBeLessThanOrEqual(all.length + 1);
      } while (cursor !== null);
      expect(seen).toEqual(all);
      expect(pages).toBe(Math.max(1, Math.ceil(all.length / limit)));
    });

    it('answers 400 for bad limits and bad cursors', async () => {
      const bad = [
        'limit=0',
        'limit=1001',
        'limit=ten',
        'limit=3.5',
        'cursor=',
        'cursor=%%%',
        'cursor=bm90LWpzb24',
        `cursor=${'b'.repeat(513)}`,
        `cursor=${b64(['2024-01-01T00:00:00.000Z', randomUUID(), 'extra'])}`,
        `cursor=${b64(['yesterday', randomUUID()])}`,
        `cursor=${b64(['2024-01-01T00:00:00.000Z', 'zzz'])}`,
        `cursor=${b64([1, 2])}`,
      ];
      for (const query of bad) {
        const res = await app.request('GET', `/v1/api_keys?${query}`, { token: tenant.apiKey });
        expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 400, code: 'bad_request' });
      }
      expect((await app.request('GET', '/v1/api_keys?limit=1000', { token: tenant.apiKey })).status).toBe(200);
    });

    it('never shows another tenant’s keys', async () => {
      const other = await provisionTenant(app);
      const minted = await mint(other.apiKey, { label: 'other tenant' });
      const mine = await app.request('GET', '/v1/api_keys?limit=1000', { token: tenant.apiKey });
      expect(ids(mine)).toEqual(all);
      const theirs = await app.request('GET', '/v1/api_keys', { token: other.apiKey });
      expect(ids(theirs)).toHaveLength(2);
      expect(ids(theirs)).toContain(minted.body.api_key.id);
      expect(ids(theirs).some((id: string) => all.includes(id))).toBe(false);
    });
  });

  describe('DELETE /v1/api_keys/{id}', () => {
    it('revokes at once: the very next request with the key is 401; idempotent', async () => {
      const tenant = await provisionTenant(app);
      const minted = await mint(tenant.apiKey, { label: 'to revoke' });
      const token: string = minted.body.token;
      expect((await app.request('GET', '/v1/me', { token })).status).toBe(200);

      const revoked = await app.request('DELETE', `/v1/api_keys/${minted.body.api_key.id}`, { token: tenant.apiKey });
      expect(revoked.status).toBe(200);
      expect(Object.keys(revoked.body)).toEqual(['api_key']);
      expect(revoked.body.api_key).toEqual({ ...minted.body.api_key, revoked_at: expect.stringMatching(ISO_RE) });

      expectError(await app.request('GET', '/v1/me', { token }), 401, 'unauthorized');
      expectError(await mint(token), 401, 'unauthorized');
      // Other keys keep working.
      expect((await app.request('GET', '/v1/me', { token: tenant.apiKey })).status).toBe(200);

      const again = await app.request('DELETE', `/v1/api_keys/${minted.body.api_key.id}`, { token: tenant.apiKey });
      expect(again.status).toBe(200);
      expect(again.body.api_key).toEqual(revoked.body.api_key);

      const rows = await auditRows(tenant.tenantId, 'api_key.revoked');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ actorType: 'api_key', subjectType: 'api_key', subjectId: minted.body.api_key.id });

      // The row is kept, marked revoked.
      const list = await app.request('GET', '/v1/api_keys', { token: tenant.apiKey });
      expect(list.body.api_keys.find((k: { id: string }) => k.id === minted.body.api_key.id)).toEqual(revoked.body.api_key);
      // Reactivation of a suspended tenant does not bring a revoked key back.
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/reactivate`, { token: ADMIN_TOKEN });
      expectError(await app.request('GET', '/v1/me', { token }), 401, 'unauthorized');
    });

    it('a key can revoke itself (rotation); a ddu_ session can revoke keys', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      const keys = await app.request('GET', '/v1/api_keys', { token: tenant.apiKey });
      const firstId = ids(keys)[0];
      const successor = await mint(tenant.apiKey, { label: 'successor' });
      const self = await app.request('DELETE', `/v1/api_keys/${firstId}`, { token: tenant.apiKey });
      expect(self.status).toBe(200);
      expect(self.body.api_key.revoked_at).toMatch(ISO_RE);
      expectError(await app.request('GET', '/v1/api_keys', { token: tenant.apiKey }), 401, 'unauthorized');
      expect((await app.request('GET', '/v1/api_keys', { token: successor.body.token })).status).toBe(200);

      const bySession = await app.request('DELETE', `/v1/api_keys/${successor.body.api_key.id}`, { token: session.token });
      expect(bySession.status).toBe(200);
      expectError(await app.request('GET', '/v1/me', { token: successor.body.token }), 401, 'unauthorized');
      const rows = await auditRows(tenant.tenantId, 'api_key.revoked');
      expect(rows.map((r) => [r.actorType, r.subjectId])).toEqual([
        ['api_key', firstId],
        ['user', successor.body.api_key.id],
      ]);
      expect(rows[0]!.actorId).toBe(firstId);
      expect(rows[1]!.actorId).toBe(session.userId);
    });

    it('answers one identical 404 for another tenant’s key, an unknown id and a malformed id', async () => {
      const a = await provisionTenant(app);
      const b = await provisionTenant(app);
      const foreign = await mint(b.apiKey, { label: 'b key' });
      const texts = new Set<string>();
      for (const id of [foreign.body.api_key.id, foreign.body.api_key.id.toUpperCase(), randomUUID(), 'not-a-uuid', foreign.body.token]) {
        const res = await app.request('DELETE', `/v1/api_keys/${id}`, { token: a.apiKey });
        expectError(res, 404, 'not_found');
        texts.add(res.text);
      }
      expect(texts.size).toBe(1);
      // b's key still works and is not revoked.
      expect((await app.request('GET', '/v1/me', { token: foreign.body.token })).status).toBe(200);
      const list = await app.request('GET', '/v1/api_keys', { token: b.apiKey });
      expect(list.body.api_keys.every((k: { revoked_at: string | null }) => k.revoked_at === null)).toBe(true);
      expect(await auditRows(a.tenantId, 'api_key.revoked')).toHaveLength(0);
    });

    it('answers 401 without a valid credential and 403 for a suspended tenant', async () => {
      const tenant = await provisionTenant(app);
      const minted = await mint(tenant.apiKey);
      const path = `/v1/api_keys/${minted.body.api_key.id}`;
      expectError(await app.request('DELETE', path), 401, 'unauthorized');
      expectError(await app.request('DELETE', path, { token: `dd_${'K'.repeat(43)}` }), 401, 'unauthorized');
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
      expectError(await app.request('DELETE', path, { token: tenant.apiKey }), 403, 'forbidden');
      expectError(await app.request('DELETE', path, { token: minted.body.token }), 403, 'forbidden');
      await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/reactivate`, { token: ADMIN_TOKEN });
      // The refused revocation did nothing.
      expect((await app.request('GET', '/v1/me', { token: minted.body.token })).status).toBe(200);
    });
  });
});
