import { generateKeyPairSync } from 'node:crypto';
import { Client } from 'pg';
import type { Resolver } from '../../src/lib/egress';
import { withTenant, withTenantSql } from '../../src/lib/tenancy';
import { smsProviderRoutes } from '../../src/modules/sms-providers/sms-provider.routes';
import { providerWebhookSecret, resolveSmsProvider } from '../../src/modules/sms-providers/sms-provider.resolve';
import { createUserSession, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { widgetRouter } from '../helpers/widget';

const FIELDS = ['id', 'account_id', 'tenant_id', 'scope', 'adapter', 'region', 'name', 'base_url', 'has_secret', 'has_api_key', 'status', 'created_at', 'updated_at'];
const PUBLIC_V4 = '93.184.216.34';
const SMS_URL = 'https://sms.example.com/api';
const HMAC_SECRET = 'hmac-secret-value-0123456789abcdef';

const DNS: Record<string, string[]> = {
  'sms.example.com': [PUBLIC_V4],
  'private.example.com': ['10.1.2.3'],
  'mixed.example.com': [PUBLIC_V4, '192.168.7.7'],
  'meta.example.com': ['169.254.169.254'],
};
const testResolver: Resolver = (host) => {
  const answer = DNS[host];
  if (!answer) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
  return Promise.resolve(answer);
};

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

const ed25519 = () => {
  const { publicKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  return { raw: spki.subarray(12).toString('base64'), spki: spki.toString('base64'), pem: publicKey.export({ format: 'pem', type: 'spki' }).toString() };
};

describe('SMS providers', () => {
  let app: TestApp;
  let owner: Client;
  /** Tenants A and B share one account; C is of another account. */
  let a: ProvisionedTenant;
  let b: ProvisionedTenant;
  let c: ProvisionedTenant;
  let aAdmin: string;
  let aMember: string;
  let bAdmin: string;
  let cAdmin: string;

  const post = (token: string, body: unknown) => app.request('POST', '/v1/sms/providers', { token, body });
  const get = (token: string, id: string) => app.request('GET', `/v1/sms/providers/${id}`, { token });
  const patch = (token: string, id: string, body: unknown) => app.request('PATCH', `/v1/sms/providers/${id}`, { token, body });
  const retire = (token: string, id: string) => app.request('POST', `/v1/sms/providers/${id}/retire`, { token });
  const list = (token: string) => app.request('GET', '/v1/sms/providers', { token });
  const create = async (token: string, body: Record<string, unknown> = {}) => {
    const res = await post(token, { adapter: 'mock', region: 'us', name: 'Main', ...body });
    expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
    return res.body.sms_provider as Record<string, any>;
  };
  const row = (t: ProvisionedTenant, id: string) => withTenant(app.deps.db, t.tenantId, (tx) => tx.smsProvider.findUniqueOrThrow({ where: { id } }));
  const audits = (t: ProvisionedTenant, id: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findMany({ where: { subjectType: 'sms_provider', subjectId: id }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }));
  const auditText = (entries: unknown[]) => JSON.stringify(entries, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  const resolve = (t: ProvisionedTenant) => withTenantSql(app.deps.db, t.tenantId, (sql) => resolveSmsProvider(sql, app.deps, t.tenantId));
  const accountOf = async (t: ProvisionedTenant) => (await owner.query<{ account_id: string }>('SELECT account_id FROM tenants WHERE id = $1', [t.tenantId])).rows[0]!.account_id;

  beforeAll(async () => {
    app = await startTestApp({ EGRESS_ALLOWLIST: '' });
    app.deps.resolver = testResolver;
    owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await owner.connect();
    [a, b, c] = await Promise.all([provisionTenant(app), provisionTenant(app), provisionTenant(app)]);
    // The operator API gives every tenant its own account; sites (sedes) of one company share one.
    await owner.query('UPDATE tenants SET account_id = (SELECT account_id FROM tenants WHERE id = $1) WHERE id = $2', [a.tenantId, b.tenantId]);
    aAdmin = (await createUserSession(app, a)).token;
    aMember = (await createUserSession(app, a)).token;
    bAdmin = (await createUserSession(app, b)).token;
    cAdmin = (await createUserSession(app, c)).token;
  });

  afterAll(async () => {
    await owner?.end();
    await app?.close();
  });

  describe('POST /v1/sms/providers', () => {
    it('creates a sede provider with the exact view, the secret write-only and encrypted', async () => {
      const res = await post(a.apiKey, { adapter: 'http', region: 'mx', name: '  Main  ', base_url: SMS_URL, webhook_secret: HMAC_SECRET });
      expect(res.status).toBe(201);
      const p = res.body.sms_provider;
      expect(Object.keys(p).sort()).toEqual([...FIELDS].sort());
      expect(p).toMatchObject({ tenant_id: a.tenantId, account_id: await accountOf(a), scope: 'sede', adapter: 'http', region: 'mx', name: 'Main', base_url: SMS_URL, has_secret: true, has_api_key: false, status: 'active' });
      expect(res.text).not.toContain(HMAC_SECRET);
      const stored = await row(a, p.id);
      expect(stored.webhookSecretCiphertext).not.toContain(HMAC_SECRET);
      expect(providerWebhookSecret(app.deps, stored)).toBe(HMAC_SECRET);
      expect(providerWebhookSecret(app.deps, { webhook_secret_ciphertext: stored.webhookSecretCiphertext })).toBe(HMAC_SECRET);
      const entries = await audits(a, p.id);
      expect(entries.map((e) => e.action)).toEqual(['sms_provider.created']);
      expect(auditText(entries)).not.toContain(HMAC_SECRET);
      expect((await get(a.apiKey, p.id)).text).not.toContain(HMAC_SECRET);
      expect((await list(a.apiKey)).text).not.toContain(HMAC_SECRET);
    });

    it('stores a blank base_url as null (the deployment endpoint) and no secret as has_secret false', async () => {
      const p = await create(a.apiKey, { base_url: '  ' });
      expect(p).toMatchObject({ base_url: null, has_secret: false, status: 'active', scope: 'sede' });
      expect((await create(a.apiKey, { base_url: null, status: 'disabled' })).status).toBe('disabled');
    });

    it.each([
      ['missing adapter', { region: 'us', name: 'x' }],
      ['missing name', { adapter: 'mock', region: 'us' }],
      ['unknown adapter', { adapter: 'smpp', region: 'us', name: 'x' }],
      ['unknown region', { adapter: 'mock', region: 'br', name: 'x' }],
      ['wrong type', { adapter: 'mock', region: 'us', name: 5 }],
      ['tenant_id', { adapter: 'mock', region: 'us', name: 'x', tenant_id: 'a' }],
      ['account_id', { adapter: 'mock', region: 'us', name: 'x', account_id: 'a' }],
      ['unknown scope', { adapter: 'mock', region: 'us', name: 'x', scope: 'global' }],
      ['unknown status', { adapter: 'mock', region: 'us', name: 'x', status: 'paused' }],
    ])('400 bad_request: %s', async (_label, body) => {
      expectError(await post(a.apiKey, body), 400, 'bad_request');
    });

    it('400 for malformed JSON and 415 for a non-JSON body', async () => {
      expectError(await app.request('POST', '/v1/sms/providers', { token: a.apiKey, rawBody: '{', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
      expect((await app.request('POST', '/v1/sms/providers', { token: a.apiKey, rawBody: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    });

    it('400 invalid: blank or long name, retired at creation, blank secret', async () => {
      expectError(await post(a.apiKey, { adapter: 'mock', region: 'us', name: '   ' }), 400, 'invalid', /name/);
      expectError(await post(a.apiKey, { adapter: 'mock', region: 'us', name: 'x'.repeat(201) }), 400, 'invalid', /name/);
      expectError(await post(a.apiKey, { adapter: 'mock', region: 'us', name: 'x', status: 'retired' }), 400, 'invalid', /status/);
      expectError(await post(a.apiKey, { adapter: 'mock', region: 'us', name: 'x', webhook_secret: ' ' }), 400, 'invalid', /webhook_secret/);
    });

    it('carrier_a takes an Ed25519 public key as raw base64, SPKI base64 or PEM, and refuses anything else', async () => {
      const key = ed25519();
      for (const secret of [key.raw, key.spki, key.pem]) {
        expect((await create(a.apiKey, { adapter: 'carrier_a', webhook_secret: secret })).has_secret).toBe(true);
      }
      const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
      for (const secret of [HMAC_SECRET, Buffer.alloc(31).toString('base64'), rsa, 'not base64!']) {
        const res = await post(a.apiKey, { adapter: 'carrier_a', region: 'us', name: 'x', webhook_secret: secret });
        expectError(res, 422, 'unprocessable', /Ed25519/);
        expect(res.text).not.toContain(secret);
      }
    });

    it.each([
      ['http, not https', 'http://sms.example.com/api', /https/],
      ['another port', 'https://sms.example.com:8443/api', /443/],
      ['credentials', 'https://u:p@sms.example.com/api', /credentials/],
      ['an IP literal', 'https://10.0.0.1/api', /IP literal/],
      ['localhost', 'https://localhost/api', /internal/],
      ['a metadata name', 'https://metadata.google.internal/', /metadata/],
      ['a private address', 'https://private.example.com/api', /non-public/],
      ['one private address among public ones', 'https://mixed.example.com/api', /non-public/],
      ['a metadata address', 'https://meta.example.com/api', /non-public/],
      ['an unresolvable name', 'https://nowhere.example.com/api', /resolve/],
      ['not a URL', 'sms.example.com', /URL/],
    ])('422 unprocessable for a base_url with %s, naming base_url and never an address', async (_label, url, rule) => {
      const res = await post(a.apiKey, { adapter: 'http', region: 'us', name: 'x', base_url: url });
      expectError(res, 422, 'unprocessable', /base_url/);
      expect(res.body.error.message).toMatch(rule);
      expect(res.body.error.message).not.toMatch(/10\.1\.2\.3|192\.168|169\.254/);
    });

    it('checks base_url with the resolver of the moment', async () => {
      const original = app.deps.resolver;
      try {
        app.deps.resolver = () => Promise.resolve(['172.16.0.9']);
        expectError(await post(a.apiKey, { adapter: 'http', region: 'us', name: 'x', base_url: SMS_URL }), 422, 'unprocessable', /base_url/);
      } finally {
        app.deps.resolver = original;
      }
    });

    it('lets an allowlisted origin through (development and tests)', async () => {
      const custom = await startTestApp({ EGRESS_ALLOWLIST: 'http://127.0.0.1:9' });
      try {
        const t = await provisionTenant(custom);
        const res = await custom.request('POST', '/v1/sms/providers', { token: t.apiKey, body: { adapter: 'http', region: 'us', name: 'x', base_url: 'http://127.0.0.1:9/sms' } });
        expect(res.status).toBe(201);
        expect(res.body.sms_provider.base_url).toBe('http://127.0.0.1:9/sms');
      } finally {
        await custom.close();
      }
    });

    it('scope empresa: account_admin session only (403 for a member, a dd_ key, before any DNS work)', async () => {
      expectError(await post(aMember, { adapter: 'mock', region: 'us', name: 'x', scope: 'empresa' }), 403, 'forbidden');
      expectError(await post(a.apiKey, { adapter: 'mock', region: 'us', name: 'x', scope: 'empresa' }), 403, 'forbidden');
      expectError(await post(a.apiKey, { adapter: 'http', region: 'us', name: 'x', scope: 'empresa', base_url: 'https://private.example.com/' }), 403, 'forbidden');
      const p = await create(aAdmin, { scope: 'empresa', name: 'Company-wide' });
      expect(p).toMatchObject({ scope: 'empresa', tenant_id: null, account_id: await accountOf(a) });
      expect((await audits(a, p.id))[0]).toMatchObject({ action: 'sms_provider.created', actorType: 'user' });
    });

    it('401 without or with a bad credential, 403 for a widget token', async () => {
      expectError(await app.request('GET', '/v1/sms/providers'), 401, 'unauthorized');
      expectError(await post('dd_bogus', { adapter: 'mock', region: 'us', name: 'x' }), 401, 'unauthorized');
      const router = widgetRouter(a, smsProviderRoutes(app.deps));
      for (const [method, path, body] of [
        ['GET', '/v1/sms/providers', undefined],
        ['POST', '/v1/sms/providers', JSON.stringify({ adapter: 'mock', region: 'us', name: 'x' })],
      ] as const) {
        const res = await router.request(path, { method, body, headers: body ? { 'content-type': 'application/json' } : {} });
        expect(res.status).toBe(403);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
      }
    });
  });

  describe('reading, inheritance and isolation', () => {
    it('a second tenant of the account sees the empresa provider; a tenant of another account does not', async () => {
      const empresa = await create(aAdmin, { scope: 'empresa', name: 'Inherited' });
      const own = await create(a.apiKey, { name: 'A only' });
      const bIds = (await list(b.apiKey)).body.sms_providers.map((p: { id: string }) => p.id);
      expect(bIds).toContain(empresa.id);
      expect(bIds).not.toContain(own.id);
      expect((await get(b.apiKey, empresa.id)).body.sms_provider).toMatchObject({ id: empresa.id, scope: 'empresa', tenant_id: null });
      const cIds = (await list(c.apiKey)).body.sms_providers.map((p: { id: string }) => p.id);
      expect(cIds).not.toContain(empresa.id);
      expectError(await get(c.apiKey, empresa.id), 404, 'not_found');
      expectError(await get(c.apiKey, own.id), 404, 'not_found');
      expectError(await get(b.apiKey, own.id), 404, 'not_found');
      const aList = (await list(a.apiKey)).body.sms_providers;
      expect(aList.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([empresa.id, own.id]));
      for (const p of aList) expect(Object.keys(p).sort()).toEqual([...FIELDS].sort());
    });

    it('404 for an unknown, a malformed or a foreign id on every route', async () => {
      const own = await create(a.apiKey);
      for (const id of ['5b0b7c0e-0000-4000-8000-000000000000', 'not-a-uuid']) {
        expectError(await get(a.apiKey, id), 404, 'not_found');
        expectError(await patch(a.apiKey, id, { name: 'y' }), 404, 'not_found');
        expectError(await retire(a.apiKey, id), 404, 'not_found');
      }
      expectError(await patch(c.apiKey, own.id, { name: 'y' }), 404, 'not_found');
      expectError(await retire(c.apiKey, own.id), 404, 'not_found');
      expect((await row(a, own.id)).name).toBe('Main');
    });

    it('has no DELETE route (405 with Allow, CONTRACT section 14)', async () => {
      const own = await create(a.apiKey);
      const del = await app.request('DELETE', `/v1/sms/providers/${own.id}`, { token: a.apiKey });
      expect({ status: del.status, code: del.body?.error?.code }).toEqual({ status: 405, code: 'method_not_allowed' });
      expect(String(del.headers.allow).split(/,\s*/).sort()).toEqual(expect.arrayContaining(['GET', 'PATCH']));
      expect((await get(a.apiKey, own.id)).status).toBe(200);
    });
  });

  describe('PATCH and retire', () => {
    it('changes fields, writes nothing for a no-op, audits without the secret', async () => {
      const p = await create(a.apiKey, { adapter: 'http', base_url: SMS_URL });
      const res = await patch(a.apiKey, p.id, { name: 'Renamed', region: 'eu', status: 'disabled', base_url: '', webhook_secret: HMAC_SECRET });
      expect(res.status).toBe(200);
      expect(res.body.sms_provider).toMatchObject({ name: 'Renamed', region: 'eu', status: 'disabled', base_url: null, has_secret: true, scope: 'sede' });
      expect(res.text).not.toContain(HMAC_SECRET);
      expect((await patch(a.apiKey, p.id, { name: 'Renamed' })).status).toBe(200);
      expect((await patch(a.apiKey, p.id, { webhook_secret: null })).body.sms_provider.has_secret).toBe(false);
      const entries = await audits(a, p.id);
      expect(entries.map((e) => e.action)).toEqual(['sms_provider.created', 'sms_provider.updated', 'sms_provider.updated']);
      expect(entries[1]!.payload).toMatchObject({ webhook_secret: 'set' });
      expect(entries[2]!.payload).toMatchObject({ webhook_secret: 'removed', changed: ['webhook_secret'] });
      expect(auditText(entries)).not.toContain(HMAC_SECRET);
    });

    it('400 for scope (immutable), unknown keys, bad values; 422 for a refused base_url', async () => {
      const p = await create(a.apiKey);
      expectError(await patch(a.apiKey, p.id, { scope: 'empresa' }), 400, 'bad_request', /scope/);
      expectError(await patch(a.apiKey, p.id, { scope: 'sede' }), 400, 'bad_request', /scope/);
      expectError(await patch(a.apiKey, p.id, { tenant_id: c.tenantId }), 400, 'bad_request', /tenant_id/);
      expectError(await patch(a.apiKey, p.id, { region: 'br' }), 400, 'bad_request');
      expectError(await patch(a.apiKey, p.id, { name: '' }), 400, 'invalid');
      expectError(await patch(a.apiKey, p.id, { base_url: 'https://private.example.com/' }), 422, 'unprocessable', /base_url/);
      expectError(await patch(a.apiKey, p.id, { adapter: 'carrier_a', webhook_secret: HMAC_SECRET }), 422, 'unprocessable', /Ed25519/);
      expect((await row(a, p.id)).tenantId).toBe(a.tenantId);
    });

    it('moving to carrier_a keeps the stored secret only when it is an Ed25519 key', async () => {
      const withHmac = await create(a.apiKey, { webhook_secret: HMAC_SECRET });
      expectError(await patch(a.apiKey, withHmac.id, { adapter: 'carrier_a' }), 422, 'unprocessable', /webhook_secret/);
      const key = ed25519();
      expect((await patch(a.apiKey, withHmac.id, { adapter: 'carrier_a', webhook_secret: key.raw })).body.sms_provider).toMatchObject({ adapter: 'carrier_a', has_secret: true });
    });

    it('retire is final and idempotent: 409 on any later patch', async () => {
      const p = await create(a.apiKey);
      const first = await retire(a.apiKey, p.id);
      expect(first.status).toBe(200);
      expect(first.body.sms_provider.status).toBe('retired');
      const again = await retire(a.apiKey, p.id);
      expect(again.status).toBe(200);
      expect(again.body.sms_provider).toEqual(first.body.sms_provider);
      expectError(await patch(a.apiKey, p.id, { status: 'active' }), 409, 'conflict');
      expectError(await patch(a.apiKey, p.id, { name: 'back' }), 409, 'conflict');
      expect((await audits(a, p.id)).map((e) => e.action)).toEqual(['sms_provider.created', 'sms_provider.retired']);
    });

    it('an empresa provider is changed only by an account_admin session; other tenants see it but cannot change it', async () => {
      const p = await create(aAdmin, { scope: 'empresa' });
      expectError(await patch(aMember, p.id, { name: 'x' }), 403, 'forbidden');
      expectError(await patch(a.apiKey, p.id, { name: 'x' }), 403, 'forbidden');
      expectError(await patch(b.apiKey, p.id, { name: 'x' }), 403, 'forbidden');
      expectError(await retire(a.apiKey, p.id), 403, 'forbidden');
      expectError(await retire(aMember, p.id), 403, 'forbidden');
      expectError(await patch(cAdmin, p.id, { name: 'x' }), 404, 'not_found');
      // The account_admin of another site of the same account administers the account's providers too.
      expect((await patch(bAdmin, p.id, { name: 'By B' })).body.sms_provider.name).toBe('By B');
      expect((await patch(aAdmin, p.id, { status: 'disabled' })).body.sms_provider.status).toBe('disabled');
      expect((await retire(aAdmin, p.id)).body.sms_provider.status).toBe('retired');
    });
  });

  describe('resolution (sede, then empresa, then the deployment, else null)', () => {
    it('walks the order and skips disabled and retired providers', async () => {
      const t = await provisionTenant(app);
      const sibling = await provisionTenant(app);
      await owner.query('UPDATE tenants SET account_id = (SELECT account_id FROM tenants WHERE id = $1) WHERE id = $2', [t.tenantId, sibling.tenantId]);
      const admin = (await createUserSession(app, t)).token;
      const stranger = await provisionTenant(app);
      const strangerAdmin = (await createUserSession(app, stranger)).token;
      await create(strangerAdmin, { scope: 'empresa', name: 'Not ours' });

      expect(await resolve(t)).toBeNull();
      const config = app.deps.config as { SMS_PROVIDER_ADAPTER?: string; SMS_PROVIDER_BASE_URL?: string; SMS_PROVIDER_REGION: string };
      const saved = { ...config };
      try {
        Object.assign(config, { SMS_PROVIDER_ADAPTER: 'http', SMS_PROVIDER_BASE_URL: 'https://deploy.example.com', SMS_PROVIDER_REGION: 'mx' });
        expect(await resolve(t)).toEqual({ id: null, adapter: 'http', region: 'mx', baseUrl: 'https://deploy.example.com', credential: { kind: 'deployment' } });

        const empresa = await create(admin, { scope: 'empresa', adapter: 'http', region: 'eu' });
        await create(admin, { scope: 'empresa', name: 'younger' });
        // A blank base_url is the deployment endpoint of the same protocol, with the deployment's key.
        expect(await resolve(t)).toEqual({ id: empresa.id, adapter: 'http', region: 'eu', baseUrl: 'https://deploy.example.com', credential: { kind: 'deployment' } });
        expect((await resolve(sibling))?.id).toBe(empresa.id);

        const disabled = await create(t.apiKey, { status: 'disabled' });
        expect((await resolve(t))?.id).toBe(empresa.id);
        const sede = await create(t.apiKey, { adapter: 'http', base_url: SMS_URL });
        await create(t.apiKey, { name: 'younger sede' });
        // A base_url the tenant gave never gets the deployment's key.
        expect(await resolve(t)).toEqual({ id: sede.id, adapter: 'http', region: 'us', baseUrl: SMS_URL, credential: { kind: 'none' } });
        expect((await resolve(sibling))?.id).toBe(empresa.id);

        await retire(t.apiKey, sede.id);
        expect((await resolve(t))?.id).not.toBe(sede.id);
        expect((await resolve(t))?.id).not.toBe(disabled.id);
        await retire(t.apiKey, (await resolve(t))!.id!);
        expect((await resolve(t))?.id).toBe(empresa.id);
      } finally {
        Object.assign(config, saved);
        if (saved.SMS_PROVIDER_ADAPTER === undefined) delete config.SMS_PROVIDER_ADAPTER;
        if (saved.SMS_PROVIDER_BASE_URL === undefined) delete config.SMS_PROVIDER_BASE_URL;
      }
    });

    it('falls back to the deployment when the account has nothing active, and to null without one', async () => {
      const t = await provisionTenant(app);
      const admin = (await createUserSession(app, t)).token;
      const p = await create(admin, { scope: 'empresa' });
      expect((await resolve(t))?.id).toBe(p.id);
      await retire(admin, p.id);
      expect(await resolve(t)).toBeNull();
      const config = app.deps.config as { SMS_PROVIDER_ADAPTER?: string };
      try {
        config.SMS_PROVIDER_ADAPTER = 'mock';
        expect(await resolve(t)).toEqual({ id: null, adapter: 'mock', region: 'us', baseUrl: null, credential: { kind: 'deployment' } });
      } finally {
        delete config.SMS_PROVIDER_ADAPTER;
      }
    });
  });
});
