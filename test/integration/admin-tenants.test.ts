import { randomUUID } from 'node:crypto';
import { verifyAuditChain } from '../../src/lib/audit';
import { withTenant } from '../../src/lib/tenancy';
import {
  ADMIN_TOKEN,
  createUserSession,
  provisionTenant,
  startTestApp,
  uniqueEmail,
  uniqueName,
  type HttpResult,
  type RequestOptions,
  type TestApp,
} from '../helpers/harness';

/** Every field of the SPEC Tenant resource, plus the wrap-up cap and the plan status; nothing more. */
const TENANT_FIELDS = [
  'id',
  'name',
  'status',
  'retention_months',
  'seats',
  'tier',
  'voice_ai_enabled',
  'ai_monthly_budget_usd',
  'ai_max_call_seconds',
  'ai_max_call_seconds_effective',
  'sms_monthly_budget_usd',
  'human_initiated_enabled',
  'max_cps',
  'max_concurrent_channels',
  'abandon_seller_name',
  'abandon_seller_phone',
  'tax_country',
  'tax_region',
  'tax_postal_code',
  'agent_wrap_up_seconds',
  'plan_status',
  'created_at',
  'updated_at',
].sort();

const AGENT_FIELDS = [
  'id',
  'tenant_id',
  'name',
  'email',
  'role',
  'status',
  'sip_extension',
  'device_mode',
  'login_enabled',
  'presence',
  'registered',
  'created_at',
  'updated_at',
].sort();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const ACTIVE_TIERS = ['starter', 'growth', 'scale', 'enterprise', 'dialer_core'] as const;
const RETIRED_TIERS = ['compliance_pro', 'audit_shield'] as const;
const VOICE_AI_TIERS = ['growth', 'scale', 'enterprise'] as const;
const NO_VOICE_AI_TIERS = ['starter', 'dialer_core'] as const;

/** Each test that sends bad operator credentials uses its own loopback origin (shared counters). */
let originSeq = 0;
function freshOrigin(): string {
  originSeq += 1;
  return `127.0.${10 + Math.floor(originSeq / 200)}.${(originSeq % 200) + 1}`;
}

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

describe('operator (admin) tenant routes', () => {
  let app: TestApp;
  const admin = (method: string, path: string, body?: unknown, opts: RequestOptions = {}) =>
    app.request(method, path, { token: ADMIN_TOKEN, body, ...opts });
  const createBody = (extra: Record<string, unknown> = {}) => ({
    name: uniqueName('adm'),
    admin: { name: 'Ada Admin', email: uniqueEmail('ada') },
    ...extra,
  });
  const auditRows = (tenantId: string, action?: string) =>
    withTenant(app.deps.db, tenantId, (tx) => tx.auditLog.findMany({ where: action ? { action } : {}, orderBy: [{ occurredAt: 'asc' }, { lane: 'asc' }, { seq: 'asc' }] }));
  const setTierDirectly = (tenantId: string, tier: string, voiceAiEnabled = false) =>
    withTenant(app.deps.db, tenantId, (tx) => tx.tenant.update({ where: { id: tenantId }, data: { tier, voiceAiEnabled } }));

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('operator authentication', () => {
    it('answers 401 unauthorized without a bearer on every admin route', async () => {
      const localAddress = freshOrigin();
      const id = randomUUID();
      const calls: [string, string, unknown][] = [
        ['POST', '/v1/admin/tenants', createBody()],
        ['GET', `/v1/admin/tenants/${id}`, undefined],
        ['PATCH', `/v1/admin/tenants/${id}`, { seats: 4 }],
        ['POST', `/v1/admin/tenants/${id}/suspend`, undefined],
        ['POST', `/v1/admin/tenants/${id}/reactivate`, undefined],
      ];
      for (const [method, path, body] of calls) {
        const res = await app.request(method, path, { body, localAddress });
        expectError(res, 401, 'unauthorized');
      }
    });

    it('answers 401 for a wrong token, a wrong scheme and a tenant dd_ key', async () => {
      const tenant = await provisionTenant(app);
      const localAddress = freshOrigin();
      const attempts: Record<string, string>[] = [
        { authorization: 'Bearer wrong-operator-token' },
        { authorization: `Bearer ${ADMIN_TOKEN}x` },
        { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` },
        { authorization: `Basic ${ADMIN_TOKEN}` },
        { authorization: `bearer${ADMIN_TOKEN}` },
        { authorization: `Bearer ${tenant.apiKey}` },
      ];
      for (const headers of attempts) {
        const res = await app.request('GET', `/v1/admin/tenants/${tenant.tenantId}`, { headers, localAddress });
        expectError(res, 401, 'unauthorized');
      }
      // Nothing was created or changed by any of them.
      const check = await admin('GET', `/v1/admin/tenants/${tenant.tenantId}`);
      expect(check.status).toBe(200);
    });

    it('fails closed with 401 when ADMIN_API_TOKEN is unset, whatever is presented', async () => {
      const closed = await startTestApp({ ADMIN_API_TOKEN: '' });
      try {
        const localAddress = freshOrigin();
        const name = uniqueName('closed');
        for (const token of [ADMIN_TOKEN, null]) {
          const res = await closed.request('POST', '/v1/admin/tenants', {
            token,
            body: { name, admin: { name: 'A', email: uniqueEmail() } },
            localAddress,
          });
          expectError(res, 401, 'unauthorized');
        }
        // An empty bearer does not match an empty setting either.
        const empty = await closed.request('GET', `/v1/admin/tenants/${randomUUID()}`, {
          headers: { authorization: 'Bearer ' },
          localAddress,
        });
        expectError(empty, 401, 'unauthorized');
        // The refused create left no tenant behind: the name is still free.
        const later = await admin('POST', '/v1/admin/tenants', { name, admin: { name: 'A', email: uniqueEmail() } });
        expect(later.status).toBe(201);
      } finally {
        await closed.close();
      }
    });

    it('counts failures per origin: 10 failures are 401, then 429 rate_limited even with the right token', async () => {
      const tenant = await provisionTenant(app);
      const origin = freshOrigin();
      const other = freshOrigin();
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      for (let i = 0; i < 10; i += 1) {
        const res = await app.request('GET', path, { token: `wrong-${i}`, localAddress: origin });
        expectError(res, 401, 'unauthorized');
      }
      const right = await app.request('GET', path, { token: ADMIN_TOKEN, localAddress: origin });
      expectError(right, 429, 'rate_limited');
      expect(right.headers['retry-after']).toBeUndefined();
      const wrong = await app.request('GET', path, { token: 'wrong-again', localAddress: origin });
      expectError(wrong, 429, 'rate_limited');
      const write = await app.request('POST', `${path}/suspend`, { token: ADMIN_TOKEN, localAddress: origin });
      expectError(write, 429, 'rate_limited');
      // The refused suspend did nothing.
      expect((await admin('GET', path)).body.tenant.status).toBe('active');
      // Another origin is not affected.
      const elsewhere = await app.request('GET', path, { token: ADMIN_TOKEN, localAddress: other });
      expect(elsewhere.status).toBe(200);
    });

    it('never counts a request without a bearer: it guesses nothing', async () => {
      const tenant = await provisionTenant(app);
      const origin = freshOrigin();
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      for (let i = 0; i < 15; i += 1) expectError(await app.request('GET', path, { localAddress: origin }), 401, 'unauthorized');
      expect((await app.request('GET', path, { token: ADMIN_TOKEN, localAddress: origin })).status).toBe(200);
    });

    it('never counts a correct token', async () => {
      const tenant = await provisionTenant(app);
      const origin = freshOrigin();
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      for (let i = 0; i < 25; i += 1) {
        const ok = await app.request('GET', path, { token: ADMIN_TOKEN, localAddress: origin });
        expect(ok.status).toBe(200);
      }
      // A 404 or 400 with the right token is not an authentication failure either.
      for (let i = 0; i < 5; i += 1) {
        expect((await app.request('GET', `/v1/admin/tenants/${randomUUID()}`, { token: ADMIN_TOKEN, localAddress: origin })).status).toBe(404);
        expect((await app.request('PATCH', path, { token: ADMIN_TOKEN, body: { seats: 'x' }, localAddress: origin })).status).toBe(400);
      }
      // Then ten failed guesses use the budget up.
      for (let i = 0; i < 10; i += 1) {
        expectError(await app.request('GET', path, { token: `wrong-${i}`, localAddress: origin }), 401, 'unauthorized');
      }
      expectError(await app.request('GET', path, { token: ADMIN_TOKEN, localAddress: origin }), 429, 'rate_limited');
    });
  });

  describe('POST /v1/admin/tenants', () => {
    it('creates the tenant, its admin agent and a working first dd_ key', async () => {
      const name = uniqueName('Acme Collections');
      const email = uniqueEmail('Ops').replace('ops', 'OPS');
      const res = await admin('POST', '/v1/admin/tenants', { name, admin: { name: 'Olga Ops', email } });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['admin_agent', 'api_key', 'tenant']);

      const { tenant, admin_agent: agent, api_key: apiKey } = res.body;
      expect(Object.keys(tenant).sort()).toEqual(TENANT_FIELDS);
      expect(tenant).toEqual({
        id: expect.stringMatching(UUID_RE),
        name,
        status: 'active',
        retention_months: 36,
        seats: 3,
        tier: 'starter',
        voice_ai_enabled: false,
        ai_monthly_budget_usd: null,
        ai_max_call_seconds: null,
        ai_max_call_seconds_effective: 900,
        sms_monthly_budget_usd: null,
        human_initiated_enabled: false,
        max_cps: null,
        max_concurrent_channels: null,
        abandon_seller_name: null,
        abandon_seller_phone: null,
        tax_country: null,
        tax_region: null,
        tax_postal_code: null,
        agent_wrap_up_seconds: 0,
        plan_status: 'active',
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });

      expect(Object.keys(agent).sort()).toEqual(AGENT_FIELDS);
      expect(agent).toEqual({
        id: expect.stringMatching(UUID_RE),
        tenant_id: tenant.id,
        name: 'Olga Ops',
        email: email.toLowerCase(),
        role: 'admin',
        status: 'active',
        sip_extension: null,
        device_mode: 'browser',
        login_enabled: false,
        presence: 'offline',
        registered: false,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });

      expect(Object.keys(apiKey)).toEqual(['token']);
      expect(apiKey.token).toMatch(/^dd_[A-Za-z0-9_-]{43}$/);

      const me = await app.request('GET', '/v1/me', { token: apiKey.token });
      expect(me.status).toBe(200);
      expect(me.body).toEqual({ tenant });

      const read = await admin('GET', `/v1/admin/tenants/${tenant.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ tenant });

      const keys = await app.request('GET', '/v1/api_keys', { token: apiKey.token });
      expect(keys.status).toBe(200);
      expect(keys.body.api_keys).toHaveLength(1);

      const audit = await auditRows(tenant.id);
      expect(audit.map((r) => r.action)).toEqual(['tenant.created']);
      expect(audit[0]).toMatchObject({ actorType: 'operator', subjectType: 'tenant', subjectId: tenant.id });
      expect(audit[0]!.payload).toMatchObject({ tier: 'starter', voice_ai_enabled: false, admin_agent_id: agent.id, api_key_id: keys.body.api_keys[0].id });
    });

    it('applies the optional seats, tier, voice_ai_enabled and admin.sip_extension', async () => {
      const res = await admin(
        'POST',
        '/v1/admin/tenants',
        createBody({ seats: 12, tier: 'scale', voice_ai_enabled: true, admin: { name: 'Sip Admin', email: uniqueEmail(), sip_extension: 'ops-1.a_B' } }),
      );
      expect(res.status).toBe(201);
      expect(res.body.tenant).toMatchObject({ seats: 12, tier: 'scale', voice_ai_enabled: true });
      expect(res.body.admin_agent.sip_extension).toBe('ops-1.a_B');
    });

    it('applies the optional agent_wrap_up_seconds and plan_status', async () => {
      const res = await admin('POST', '/v1/admin/tenants', createBody({ agent_wrap_up_seconds: 3600, plan_status: 'trialing' }));
      expect(res.status).toBe(201);
      expect(res.body.tenant).toMatchObject({ agent_wrap_up_seconds: 3600, plan_status: 'trialing' });
      const read = await admin('GET', `/v1/admin/tenants/${res.body.tenant.id}`);
      expect(read.body.tenant).toMatchObject({ agent_wrap_up_seconds: 3600, plan_status: 'trialing' });
    });

    it('accepts a 200-character name and 100000 seats', async () => {
      const name = uniqueName('long').padEnd(200, 'n');
      const res = await admin('POST', '/v1/admin/tenants', createBody({ name, seats: 100_000 }));
      expect(res.status).toBe(201);
      expect(res.body.tenant).toMatchObject({ name, seats: 100_000 });
    });

    it('trims the name and accepts zero seats', async () => {
      const name = uniqueName('Trimmed');
      const res = await admin('POST', '/v1/admin/tenants', createBody({ name: `  ${name}  `, seats: 0 }));
      expect(res.status).toBe(201);
      expect(res.body.tenant.name).toBe(name);
      expect(res.body.tenant.seats).toBe(0);
    });

    it.each(ACTIVE_TIERS)('accepts tier %s without voice AI', async (tier) => {
      const res = await admin('POST', '/v1/admin/tenants', createBody({ tier }));
      expect(res.status).toBe(201);
      expect(res.body.tenant.tier).toBe(tier);
      expect(res.body.tenant.voice_ai_enabled).toBe(false);
    });

    it.each(VOICE_AI_TIERS)('accepts voice_ai_enabled on tier %s', async (tier) => {
      const res = await admin('POST', '/v1/admin/tenants', createBody({ tier, voice_ai_enabled: true }));
      expect(res.status).toBe(201);
      expect(res.body.tenant).toMatchObject({ tier, voice_ai_enabled: true });
    });

    it.each(NO_VOICE_AI_TIERS)('refuses voice_ai_enabled on tier %s with 422 and creates nothing', async (tier) => {
      const body = createBody({ tier, voice_ai_enabled: true });
      const res = await admin('POST', '/v1/admin/tenants', body);
      expectError(res, 422, 'unprocessable');
      expect(res.body.error.message).toContain('voice_ai_enabled');
      const retry = await admin('POST', '/v1/admin/tenants', { ...body, voice_ai_enabled: false });
      expect(retry.status).toBe(201);
    });

    it('refuses voice_ai_enabled on the default tier (starter)', async () => {
      const res = await admin('POST', '/v1/admin/tenants', createBody({ voice_ai_enabled: true }));
      expectError(res, 422, 'unprocessable');
    });

    it.each(RETIRED_TIERS)('refuses the retired tier %s on create with 422 and creates nothing', async (tier) => {
      for (const voice_ai_enabled of [false, true]) {
        const body = createBody({ tier, voice_ai_enabled });
        const res = await admin('POST', '/v1/admin/tenants', body);
        expectError(res, 422, 'unprocessable');
        expect(res.body.error.message).toContain(tier);
        // No tenant was created: the very same name is still free.
        const retry = await admin('POST', '/v1/admin/tenants', { ...body, tier: 'growth' });
        expect(retry.status).toBe(201);
      }
    });

    it('refuses a tier outside the vocabulary with 422', async () => {
      for (const tier of ['platinum', 'Starter', '']) {
        const res = await admin('POST', '/v1/admin/tenants', createBody({ tier }));
        expectError(res, 422, 'unprocessable');
        expect(res.body.error.message).toContain('tier');
      }
    });

    it('answers 422 for semantically invalid payloads and creates no tenant', async () => {
      const cases: [string, Record<string, unknown>][] = [
        ['name', { name: '   ' }],
        ['name', { name: 'x'.repeat(201) }],
        ['admin.name', { admin: { name: '  ', email: uniqueEmail() } }],
        ['admin.email', { admin: { name: 'A', email: 'not-an-email' } }],
        ['admin.email', { admin: { name: 'A', email: 'two@@example.com' } }],
        ['admin.email', { admin: { name: 'A', email: 'space @example.com' } }],
        ['admin.sip_extension', { admin: { name: 'A', email: uniqueEmail(), sip_extension: 'ext 10' } }],
        ['admin.sip_extension', { admin: { name: 'A', email: uniqueEmail(), sip_extension: '10@host' } }],
        ['admin.sip_extension', { admin: { name: 'A', email: uniqueEmail(), sip_extension: '' } }],
        ['seats', { seats: -1 }],
        ['seats', { seats: 100_001 }],
        ['agent_wrap_up_seconds', { agent_wrap_up_seconds: -1 }],
        ['agent_wrap_up_seconds', { agent_wrap_up_seconds: 3601 }],
        ['plan_status', { plan_status: 'paused' }],
        ['plan_status', { plan_status: 'Active' }],
      ];
      for (const [field, patch] of cases) {
        const body = createBody(patch);
        const res = await admin('POST', '/v1/admin/tenants', body);
        expectError(res, 422, 'unprocessable');
        expect(res.body.error.message).toContain(field);
        if (field !== 'name') {
          const retry = await admin('POST', '/v1/admin/tenants', createBody({ name: body.name }));
          expect(retry.status).toBe(201);
        }
      }
    });

    it('answers 409 conflict for a duplicate name, case-insensitively and after trimming', async () => {
      const first = await admin('POST', '/v1/admin/tenants', createBody());
      expect(first.status).toBe(201);
      const name: string = first.body.tenant.name;
      for (const dup of [name, name.toUpperCase(), ` ${name} `]) {
        const res = await admin('POST', '/v1/admin/tenants', createBody({ name: dup }));
        expectError(res, 409, 'conflict');
      }
    });

    it('answers 400 for malformed JSON, wrong types, missing fields and unknown keys', async () => {
      const malformed = await admin('POST', '/v1/admin/tenants', undefined, {
        rawBody: '{"name": "x", "admin": {',
        headers: { 'content-type': 'application/json' },
      });
      expectError(malformed, 400, 'bad_request');

      const notObject = await admin('POST', '/v1/admin/tenants', [createBody()]);
      expectError(notObject, 400, 'bad_request');

      const cases: [string, unknown][] = [
        ['name', { admin: { name: 'A', email: uniqueEmail() } }],
        ['admin', { name: uniqueName('x') }],
        ['name', createBody({ name: 42 })],
        ['admin.email', createBody({ admin: { name: 'A' } })],
        ['admin.email', createBody({ admin: { name: 'A', email: 7 } })],
        ['admin', createBody({ admin: 'someone' })],
        ['seats', createBody({ seats: '3' })],
        ['seats', createBody({ seats: 2.5 })],
        ['voice_ai_enabled', createBody({ voice_ai_enabled: 'yes' })],
        ['tier', createBody({ tier: 3 })],
        ['agent_wrap_up_seconds', createBody({ agent_wrap_up_seconds: 1.5 })],
        ['agent_wrap_up_seconds', createBody({ agent_wrap_up_seconds: '30' })],
        ['plan_status', createBody({ plan_status: 1 })],
        ['tenant_id', createBody({ tenant_id: randomUUID() })],
        ['status', createBody({ status: 'suspended' })],
        ['admin.role', createBody({ admin: { name: 'A', email: uniqueEmail(), role: 'agent' } })],
      ];
      for (const [field, body] of cases) {
        const res = await admin('POST', '/v1/admin/tenants', body);
        expectError(res, 400, 'bad_request');
        expect(res.body.error.message).toContain(field);
      }
    });

    it('answers 415 for a text/plain body', async () => {
      const res = await admin('POST', '/v1/admin/tenants', undefined, {
        rawBody: JSON.stringify(createBody()),
        headers: { 'content-type': 'text/plain' },
      });
      expectError(res, 415, 'unsupported_media_type');
    });
  });

  describe('GET /v1/admin/tenants/{id}', () => {
    it('reads any tenant, whatever its status', async () => {
      const tenant = await provisionTenant(app);
      const res = await admin('GET', `/v1/admin/tenants/${tenant.tenantId}`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['tenant']);
      expect(res.body.tenant).toMatchObject({ id: tenant.tenantId, name: tenant.name, status: 'active' });
      await admin('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`);
      const suspended = await admin('GET', `/v1/admin/tenants/${tenant.tenantId.toUpperCase()}`);
      expect(suspended.status).toBe(200);
      expect(suspended.body.tenant).toMatchObject({ id: tenant.tenantId, status: 'suspended' });
    });

    it('answers one identical 404 for unknown and malformed ids on every id route', async () => {
      const bodies: string[] = [];
      for (const id of [randomUUID(), 'not-a-uuid', '12345', `${randomUUID()}x`]) {
        for (const [method, suffix, body] of [
          ['GET', '', undefined],
          ['PATCH', '', { seats: 4 }],
          ['POST', '/suspend', undefined],
          ['POST', '/reactivate', undefined],
        ] as const) {
          const res = await admin(method, `/v1/admin/tenants/${id}${suffix}`, body);
          expectError(res, 404, 'not_found');
          bodies.push(res.text);
        }
      }
      expect(new Set(bodies).size).toBe(1);
    });
  });

  describe('PATCH /v1/admin/tenants/{id}', () => {
    it('round-trips every field and keeps the ones not sent', async () => {
      const tenant = await provisionTenant(app);
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      const before = (await admin('GET', path)).body.tenant;
      const newName = uniqueName('Renamed');
      const patch = {
        name: newName,
        tier: 'enterprise',
        voice_ai_enabled: true,
        seats: 42,
        ai_monthly_budget_usd: 1250.5,
        ai_max_call_seconds: 300,
        sms_monthly_budget_usd: 99.99,
        human_initiated_enabled: true,
        max_cps: 25,
        max_concurrent_channels: 400,
        abandon_seller_name: 'Acme Recovery LLC',
        abandon_seller_phone: '+14155552671',
        tax_country: 'US',
        tax_region: 'CA',
        tax_postal_code: '94105',
        agent_wrap_up_seconds: 45,
        plan_status: 'past_due',
      };
      const res = await admin('PATCH', path, patch);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['tenant']);
      expect(Object.keys(res.body.tenant).sort()).toEqual(TENANT_FIELDS);
      expect(res.body.tenant).toEqual({
        ...before,
        ...patch,
        ai_max_call_seconds_effective: 300,
        updated_at: expect.stringMatching(ISO_RE),
      });
      expect(Date.parse(res.body.tenant.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
      expect((await admin('GET', path)).body.tenant).toEqual(res.body.tenant);

      // One field at a time: the others keep their values.
      const seatsOnly = await admin('PATCH', path, { seats: 7 });
      expect(seatsOnly.status).toBe(200);
      expect(seatsOnly.body.tenant).toEqual({ ...res.body.tenant, seats: 7, updated_at: expect.any(String) });

      // Every nullable field clears with null.
      const cleared = await admin('PATCH', path, {
        ai_monthly_budget_usd: null,
        ai_max_call_seconds: null,
        sms_monthly_budget_usd: null,
        max_cps: null,
        max_concurrent_channels: null,
        abandon_seller_name: null,
        abandon_seller_phone: null,
        tax_country: null,
        tax_region: null,
        tax_postal_code: null,
      });
      expect(cleared.status).toBe(200);
      expect(cleared.body.tenant).toMatchObject({
        name: newName,
        tier: 'enterprise',
        voice_ai_enabled: true,
        seats: 7,
        human_initiated_enabled: true,
        ai_monthly_budget_usd: null,
        ai_max_call_seconds: null,
        ai_max_call_seconds_effective: 900,
        sms_monthly_budget_usd: null,
        max_cps: null,
        max_concurrent_channels: null,
        abandon_seller_name: null,
        abandon_seller_phone: null,
        tax_country: null,
        tax_region: null,
        tax_postal_code: null,
      });

      // Booleans flip back.
      const flipped = await admin('PATCH', path, { human_initiated_enabled: false, voice_ai_enabled: false });
      expect(flipped.body.tenant).toMatchObject({ human_initiated_enabled: false, voice_ai_enabled: false });

      // The tenant's own credential sees the operator's changes at once.
      const me = await app.request('GET', '/v1/me', { token: tenant.apiKey });
      expect(me.body.tenant).toEqual(flipped.body.tenant);
    });

    it('ai_max_call_seconds: own value is effective, null restores the platform default', async () => {
      const tenant = await provisionTenant(app);
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      for (const value of [1, 45, 86_400]) {
        const set = await admin('PATCH', path, { ai_max_call_seconds: value });
        expect(set.status).toBe(200);
        expect(set.body.tenant).toMatchObject({ ai_max_call_seconds: value, ai_max_call_seconds_effective: value });
      }
      const reset = await admin('PATCH', path, { ai_max_call_seconds: null });
      expect(reset.status).toBe(200);
      expect(reset.body.tenant).toMatchObject({ ai_max_call_seconds: null, ai_max_call_seconds_effective: 900 });
    });

    it('the effective ceiling follows the deployment default AI_MAX_CALL_SECONDS_DEFAULT', async () => {
      const custom = await startTestApp({ AI_MAX_CALL_SECONDS_DEFAULT: '600' });
      try {
        const tenant = await provisionTenant(custom);
        const read = await custom.request('GET', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN });
        expect(read.body.tenant).toMatchObject({ ai_max_call_seconds: null, ai_max_call_seconds_effective: 600 });
        const set = await custom.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN, body: { ai_max_call_seconds: 1200 } });
        expect(set.body.tenant).toMatchObject({ ai_max_call_seconds: 1200, ai_max_call_seconds_effective: 1200 });
      } finally {
        await custom.close();
      }
    });

    it('accepts the boundary values of every bounded number', async () => {
      const tenant = await provisionTenant(app);
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      const ok: Record<string, unknown>[] = [
        { seats: 0 },
        { seats: 100_000 },
        { ai_monthly_budget_usd: 0 },
        { sms_monthly_budget_usd: 0 },
        { ai_monthly_budget_usd: 999_999_999.99 },
        { max_cps: 1 },
        { max_cps: 10_000 },
        { max_concurrent_channels: 1 },
        { max_concurrent_channels: 100_000 },
        { agent_wrap_up_seconds: 0 },
        { agent_wrap_up_seconds: 3600 },
        ...['active', 'trialing', 'past_due', 'suspended', 'cancelled'].map((plan_status) => ({ plan_status })),
      ];
      for (const patch of ok) {
        const res = await admin('PATCH', path, patch);
        expect({ patch, status: res.status }).toEqual({ patch, status: 200 });
        expect(res.body.tenant).toMatchObject(patch);
      }
    });

    it('answers 422 for out-of-range numbers, bad phones and bad country codes, changing nothing', async () => {
      const tenant = await provisionTenant(app);
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      const before = (await admin('GET', path)).body.tenant;
      const cases: [string, Record<string, unknown>][] = [
        ['seats', { seats: -1 }],
        ['seats', { seats: 100_001 }],
        ['ai_monthly_budget_usd', { ai_monthly_budget_usd: -1 }],
        ['ai_monthly_budget_usd', { ai_monthly_budget_usd: 1e13 }],
        ['sms_monthly_budget_usd', { sms_monthly_budget_usd: -0.01 }],
        ['sms_monthly_budget_usd', { sms_monthly_budget_usd: 1e15 }],
        ['ai_max_call_seconds', { ai_max_call_seconds: 0 }],
        ['ai_max_call_seconds', { ai_max_call_seconds: -30 }],
        ['ai_max_call_seconds', { ai_max_call_seconds: 86_401 }],
        ['max_cps', { max_cps: 0 }],
        ['max_cps', { max_cps: 10_001 }],
        ['max_concurrent_channels', { max_concurrent_channels: 0 }],
        ['max_concurrent_channels', { max_concurrent_channels: 100_001 }],
        ['abandon_seller_phone', { abandon_seller_phone: '4155552671' }],
        ['abandon_seller_phone', { abandon_seller_phone: '+1 415 555 2671' }],
        ['abandon_seller_phone', { abandon_seller_phone: '+1415555' }],
        ['abandon_seller_phone', { abandon_seller_phone: '+10005552671' }],
        ['abandon_seller_phone', { abandon_seller_phone: '' }],
        ['abandon_seller_name', { abandon_seller_name: '   ' }],
        ['tax_country', { tax_country: 'USA' }],
        ['tax_country', { tax_country: 'U1' }],
        ['tax_country', { tax_country: 'u' }],
        ['tax_country', { tax_country: '' }],
        ['name', { name: '' }],
        ['name', { name: 'y'.repeat(201) }],
        ['agent_wrap_up_seconds', { agent_wrap_up_seconds: -1 }],
        ['agent_wrap_up_seconds', { agent_wrap_up_seconds: 3601 }],
        ['plan_status', { plan_status: 'frozen' }],
        ['plan_status', { plan_status: '' }],
        // A valid field does not rescue an invalid one in the same request.
        ['max_cps', { seats: 9, max_cps: 0 }],
      ];
      for (const [field, patch] of cases) {
        const res = await admin('PATCH', path, patch);
        expect({ patch, status: res.status, code: res.body.error?.code }).toEqual({ patch, status: 422, code: 'unprocessable' });
        expect(res.body.error.message).toContain(field);
      }
      expect((await admin('GET', path)).body.tenant).toEqual(before);
      expect(await auditRows(tenant.tenantId, 'tenant.updated')).toHaveLength(0);
    });

    it('answers 400 for wrong types, unknown keys and malformed JSON, naming the key', async () => {
      const tenant = await provisionTenant(app);
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      const cases: [string, unknown][] = [
        ['seats', { seats: 'x' }],
        ['seats', { seats: 1.5 }],
        ['seats', { seats: null }],
        ['name', { name: null }],
        ['tier', { tier: null }],
        ['voice_ai_enabled', { voice_ai_enabled: 'true' }],
        ['human_initiated_enabled', { human_initiated_enabled: 1 }],
        ['ai_max_call_seconds', { ai_max_call_seconds: '900' }],
        ['ai_max_call_seconds', { ai_max_call_seconds: 12.5 }],
        ['max_cps', { max_cps: 1.5 }],
        ['ai_monthly_budget_usd', { ai_monthly_budget_usd: '10' }],
        ['abandon_seller_phone', { abandon_seller_phone: 14155552671 }],
        ['tax_country', { tax_country: ['US'] }],
        ['status', { status: 'suspended' }],
        ['retention_months', { retention_months: 36 }],
        ['id', { id: randomUUID() }],
        ['ai_max_call_seconds_effective', { ai_max_call_seconds_effective: 10 }],
        ['agent_wrap_up_seconds', { agent_wrap_up_seconds: 2.5 }],
        ['agent_wrap_up_seconds', { agent_wrap_up_seconds: null }],
        ['plan_status', { plan_status: null }],
      ];
      for (const [field, body] of cases) {
        const res = await admin('PATCH', path, body);
        expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: 'bad_request' });
        expect(res.body.error.message).toContain(field);
      }
      const malformed = await admin('PATCH', path, undefined, { rawBody: '{"seats": 4,', headers: { 'content-type': 'application/json' } });
      expectError(malformed, 400, 'bad_request');
      const text = await admin('PATCH', path, undefined, { rawBody: '{"seats": 4}', headers: { 'content-type': 'text/plain' } });
      expectError(text, 415, 'unsupported_media_type');
      expect((await admin('GET', path)).body.tenant.seats).toBe(3);
    });

    it('answers 409 conflict when renaming to another tenant’s name (case-insensitive)', async () => {
      const a = await provisionTenant(app);
      const b = await provisionTenant(app);
      const res = await admin('PATCH', `/v1/admin/tenants/${b.tenantId}`, { name: a.name.toUpperCase() });
      expectError(res, 409, 'conflict');
      expect((await admin('GET', `/v1/admin/tenants/${b.tenantId}`)).body.tenant.name).toBe(b.name);
      // Changing the case of its own name is not a conflict.
      const own = await admin('PATCH', `/v1/admin/tenants/${b.tenantId}`, { name: b.name.toUpperCase() });
      expect(own.status).toBe(200);
      expect(own.body.tenant.name).toBe(b.name.toUpperCase());
    });

    it('enforces the tier vocabulary and voice-AI eligibility', async () => {
      const tenant = await provisionTenant(app);
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      for (const tier of ACTIVE_TIERS) {
        const res = await admin('PATCH', path, { tier });
        expect({ tier, status: res.status }).toEqual({ tier, status: 200 });
        expect(res.body.tenant.tier).toBe(tier);
      }
      for (const tier of RETIRED_TIERS) {
        const res = await admin('PATCH', path, { tier });
        expectError(res, 422, 'unprocessable');
        expect(res.body.error.message).toContain(tier);
      }
      const unknown = await admin('PATCH', path, { tier: 'platinum' });
      expectError(unknown, 422, 'unprocessable');

      // Now on dialer_core: no voice AI there, nor on starter.
      for (const tier of NO_VOICE_AI_TIERS) {
        expect((await admin('PATCH', path, { tier })).status).toBe(200);
        const res = await admin('PATCH', path, { voice_ai_enabled: true });
        expectError(res, 422, 'unprocessable');
        const both = await admin('PATCH', path, { tier, voice_ai_enabled: true });
        expectError(both, 422, 'unprocessable');
      }
      for (const tier of VOICE_AI_TIERS) {
        const res = await admin('PATCH', path, { tier, voice_ai_enabled: true });
        expect(res.status).toBe(200);
        expect(res.body.tenant).toMatchObject({ tier, voice_ai_enabled: true });
        // Moving to a tier without an allowance while voice AI stays on is refused…
        const down = await admin('PATCH', path, { tier: 'starter' });
        expectError(down, 422, 'unprocessable');
        // …and allowed when voice AI is switched off in the same request.
        const off = await admin('PATCH', path, { tier: 'starter', voice_ai_enabled: false });
        expect(off.status).toBe(200);
        expect(off.body.tenant).toMatchObject({ tier: 'starter', voice_ai_enabled: false });
      }
      const final = (await admin('GET', path)).body.tenant;
      expect(final).toMatchObject({ tier: 'starter', voice_ai_enabled: false });
    });

    it.each(RETIRED_TIERS)('keeps a tenant already on the retired tier %s and lets it use voice AI', async (tier) => {
      const tenant = await provisionTenant(app);
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      await setTierDirectly(tenant.tenantId, tier);

      const same = await admin('PATCH', path, { tier });
      expect(same.status).toBe(200);
      expect(same.body.tenant.tier).toBe(tier);

      const voice = await admin('PATCH', path, { voice_ai_enabled: true });
      expect(voice.status).toBe(200);
      expect(voice.body.tenant).toMatchObject({ tier, voice_ai_enabled: true });

      const other = await admin('PATCH', path, { seats: 5, name: uniqueName('retired') });
      expect(other.status).toBe(200);
      expect(other.body.tenant).toMatchObject({ tier, voice_ai_enabled: true, seats: 5 });

      // The other retired tier is still a new assignment.
      const sibling = RETIRED_TIERS.find((t) => t !== tier)!;
      expectError(await admin('PATCH', path, { tier: sibling }), 422, 'unprocessable');

      // Leaving the retired tier is allowed; coming back is not.
      const leave = await admin('PATCH', path, { tier: 'growth' });
      expect(leave.status).toBe(200);
      expect(leave.body.tenant).toMatchObject({ tier: 'growth', voice_ai_enabled: true });
      expectError(await admin('PATCH', path, { tier }), 422, 'unprocessable');
      expect((await admin('GET', path)).body.tenant.tier).toBe('growth');
    });

    it('writes one tenant.updated audit row per change naming the changed fields only', async () => {
      const tenant = await provisionTenant(app);
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      expect((await admin('PATCH', path, { seats: 11, max_cps: 5 })).status).toBe(200);
      const rows = await auditRows(tenant.tenantId, 'tenant.updated');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ actorType: 'operator', actorId: null, subjectType: 'tenant', subjectId: tenant.tenantId });
      expect((rows[0]!.payload as { changed: string[] }).changed.sort()).toEqual(['maxCps', 'seats']);
    });

    it('an empty PATCH changes nothing and records nothing', async () => {
      const tenant = await provisionTenant(app);
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      const before = (await admin('GET', path)).body.tenant;
      const res = await admin('PATCH', path, {});
      expect(res.status).toBe(200);
      expect(res.body.tenant).toEqual(before);
      expect(await auditRows(tenant.tenantId, 'tenant.updated')).toHaveLength(0);
    });
  });

  describe('suspend and reactivate', () => {
    it('suspension blocks every credential at once; reactivation restores them; both idempotent', async () => {
      const tenant = await provisionTenant(app);
      const session = await createUserSession(app, tenant);
      const path = `/v1/admin/tenants/${tenant.tenantId}`;

      const suspended = await admin('POST', `${path}/suspend`);
      expect(suspended.status).toBe(200);
      expect(Object.keys(suspended.body)).toEqual(['tenant']);
      expect(suspended.body.tenant).toMatchObject({ id: tenant.tenantId, status: 'suspended' });

      for (const token of [tenant.apiKey, session.token]) {
        for (const [method, route] of [
          ['GET', '/v1/me'],
          ['GET', '/v1/tenants'],
          ['GET', '/v1/users'],
          ['GET', '/v1/api_keys'],
        ] as const) {
          expectError(await app.request(method, route, { token }), 403, 'forbidden');
        }
      }
      // A new login with correct credentials is refused too.
      const login = await app.request('POST', '/v1/auth/login', { body: { email: session.email, password: session.password } });
      expectError(login, 403, 'forbidden');

      const again = await admin('POST', `${path}/suspend`);
      expect(again.status).toBe(200);
      expect(again.body.tenant).toEqual(suspended.body.tenant);

      const reactivated = await admin('POST', `${path}/reactivate`);
      expect(reactivated.status).toBe(200);
      expect(reactivated.body.tenant).toMatchObject({ id: tenant.tenantId, status: 'active' });
      expect((await app.request('GET', '/v1/me', { token: tenant.apiKey })).status).toBe(200);
      const me = await app.request('GET', '/v1/me', { token: session.token });
      expect(me.status).toBe(200);
      expect(me.body.user.id).toBe(session.userId);

      const againActive = await admin('POST', `${path}/reactivate`);
      expect(againActive.status).toBe(200);
      expect(againActive.body.tenant).toEqual(reactivated.body.tenant);

      const actions = (await auditRows(tenant.tenantId)).map((r) => r.action).filter((a) => a.startsWith('tenant.'));
      expect(actions).toEqual(['tenant.created', 'tenant.suspended', 'tenant.reactivated']);
      const rows = await auditRows(tenant.tenantId, 'tenant.suspended');
      expect(rows[0]).toMatchObject({ actorType: 'operator', subjectType: 'tenant', subjectId: tenant.tenantId });
      const chain = await withTenant(app.deps.db, tenant.tenantId, (tx) => verifyAuditChain(tx, tenant.tenantId));
      expect(chain.brokenAt).toBeNull();
      expect(chain.rows).toBeGreaterThanOrEqual(3);
    });

    it('reactivating an active tenant is a no-op', async () => {
      const tenant = await provisionTenant(app);
      const before = (await admin('GET', `/v1/admin/tenants/${tenant.tenantId}`)).body.tenant;
      const res = await admin('POST', `/v1/admin/tenants/${tenant.tenantId}/reactivate`);
      expect(res.status).toBe(200);
      expect(res.body.tenant).toEqual(before);
      expect(await auditRows(tenant.tenantId, 'tenant.reactivated')).toHaveLength(0);
    });

    it('an operator PATCH of a suspended tenant keeps it suspended', async () => {
      const tenant = await provisionTenant(app);
      const path = `/v1/admin/tenants/${tenant.tenantId}`;
      await admin('POST', `${path}/suspend`);
      const res = await admin('PATCH', path, { seats: 8 });
      expect(res.status).toBe(200);
      expect(res.body.tenant).toMatchObject({ status: 'suspended', seats: 8 });
      expectError(await app.request('GET', '/v1/me', { token: tenant.apiKey }), 403, 'forbidden');
    });

    it('suspending one tenant does not affect another', async () => {
      const a = await provisionTenant(app);
      const b = await provisionTenant(app);
      await admin('POST', `/v1/admin/tenants/${a.tenantId}/suspend`);
      expect((await app.request('GET', '/v1/me', { token: b.apiKey })).status).toBe(200);
      expectError(await app.request('GET', '/v1/me', { token: a.apiKey }), 403, 'forbidden');
    });
  });
});
