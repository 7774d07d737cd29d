import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { runWorker, startSwitchRig, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueEmail, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';

jest.setTimeout(60_000);

const MiB = 1024 * 1024;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// SPEC "Agent", in order.
const FIELDS = ['id', 'tenant_id', 'name', 'email', 'role', 'status', 'sip_extension', 'device_mode', 'login_enabled', 'presence', 'registered', 'created_at', 'updated_at'];
type Presence = 'offline' | 'available' | 'ringing' | 'on_call' | 'wrap_up' | 'paused';

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

let serial = 1000;
const nextExtension = () => `ext-${serial++}`;

describe('agents and seats', () => {
  let app: TestApp;
  let rig: SwitchRig;
  let worker: RunningWorker;
  let tenant: ProvisionedTenant;
  let other: ProvisionedTenant;
  const taskQueue = `agents-${randomUUID()}`;

  const post = (token: string | undefined, path: string, body?: unknown) => app.request('POST', path, { token, body });
  const get = (token: string, id: string) => app.request('GET', `/v1/agents/${id}`, { token });
  const create = async (t: ProvisionedTenant, body: Record<string, unknown> = {}) => {
    const res = await post(t.apiKey, '/v1/agents', { name: 'Seat', email: uniqueEmail('seat'), sip_extension: nextExtension(), ...body });
    expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
    return res.body.agent;
  };
  // The agent's audit entries without the SIP credential ones (sip-credentials.test.ts covers those).
  const audits = (t: ProvisionedTenant, agentId: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) =>
      tx.auditLog.findMany({
        where: { subjectType: 'agent', subjectId: agentId, NOT: { action: { startsWith: 'agent.sip_' } } },
        orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }],
      }),
    );
  const sipTeardowns = (t: ProvisionedTenant, agentId: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.count({ where: { subjectType: 'agent', subjectId: agentId, action: 'agent.sip_teardown' } }));
  const agentRow = (t: ProvisionedTenant, id: string) => withTenant(app.deps.db, t.tenantId, (tx) => tx.agent.findUniqueOrThrow({ where: { id } }));
  const countAgents = (t: ProvisionedTenant) => withTenant(app.deps.db, t.tenantId, (tx) => tx.agent.count());
  const setPresence = (t: ProvisionedTenant, id: string, presence: Presence) =>
    withTenant(app.deps.db, t.tenantId, (tx) => tx.agent.update({ where: { id }, data: { presence } }));

  beforeAll(async () => {
    rig = await startSwitchRig();
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
    worker = await runWorker(app, taskQueue);
    tenant = await provisionTenant(app);
    other = await provisionTenant(app);
  });
  afterAll(async () => {
    await worker?.stop();
    await app?.close();
    await rig?.close();
  });

  // -------------------------------------------------------------------------------------------
  describe('POST /v1/agents', () => {
    it('creates an active, offline agent with the SPEC fields; audited', async () => {
      const email = uniqueEmail('ana');
      const res = await post(tenant.apiKey, '/v1/agents', { name: ' Ana Ruiz ', email: email.toUpperCase(), sip_extension: 'ops-1.a_B' });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['agent']);
      expect(Object.keys(res.body.agent)).toEqual(FIELDS);
      expect(res.body.agent).toEqual({
        id: expect.stringMatching(UUID_RE),
        tenant_id: tenant.tenantId,
        name: 'Ana Ruiz',
        email: email.toLowerCase(),
        role: 'agent',
        status: 'active',
        sip_extension: 'ops-1.a_B',
        device_mode: 'browser',
        login_enabled: false,
        presence: 'offline',
        registered: false,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });
      expect((await get(tenant.apiKey, res.body.agent.id)).body).toEqual(res.body);
      const rows = await audits(tenant, res.body.agent.id);
      expect(rows.map((r) => r.action)).toEqual(['agent.created']);
      expect(rows[0]).toMatchObject({ actorType: 'api_key' });
      expect(rows[0]!.payload).toMatchObject({ role: 'agent', sip_extension: 'ops-1.a_B' });
    });

    it('takes a role and no extension (null or absent)', async () => {
      expect(await create(tenant, { role: 'supervisor', sip_extension: null })).toMatchObject({ role: 'supervisor', sip_extension: null });
      const res = await post(tenant.apiKey, '/v1/agents', { name: 'B', email: uniqueEmail() });
      expect(res.status).toBe(201);
      expect(res.body.agent).toMatchObject({ role: 'agent', sip_extension: null });
      expect(await create(tenant, { role: 'admin' })).toMatchObject({ role: 'admin' });
    });

    it('is 409 on a duplicate email (case-insensitive) or sip_extension in the tenant, fine in another tenant', async () => {
      const t = await provisionTenant(app);
      const email = uniqueEmail('dup');
      const ext = nextExtension();
      await create(t, { email, sip_extension: ext });
      const before = await countAgents(t);
      expectError(await post(t.apiKey, '/v1/agents', { name: 'X', email }), 409, 'conflict', /email/);
      expectError(await post(t.apiKey, '/v1/agents', { name: 'X', email: email.toUpperCase() }), 409, 'conflict', /email/);
      expectError(await post(t.apiKey, '/v1/agents', { name: 'X', email: uniqueEmail(), sip_extension: ext }), 409, 'conflict', /sip_extension/);
      expect(await countAgents(t)).toBe(before);
      expect((await post(other.apiKey, '/v1/agents', { name: 'X', email, sip_extension: ext })).status).toBe(201);
    });

    it('lets only one of concurrent creates with the same extension win (unique index)', async () => {
      const t = await provisionTenant(app);
      const ext = nextExtension();
      const results = await Promise.all(
        Array.from({ length: 5 }, () => post(t.apiKey, '/v1/agents', { name: 'R', email: uniqueEmail('race'), sip_extension: ext })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('conflict');
    });

    it.each([
      ['a space', 'ext 10'],
      ['an at sign', '10@host'],
      ['an empty string', ''],
      ['65 characters', 'x'.repeat(65)],
      ['a semicolon', '10;x'],
      ['a non-ASCII letter', 'ñ1'],
    ])('refuses a sip_extension with %s with 422 unprocessable', async (_label, ext) => {
      const t = await provisionTenant(app);
      const before = await countAgents(t);
      expectError(await post(t.apiKey, '/v1/agents', { name: 'X', email: uniqueEmail(), sip_extension: ext }), 422, 'unprocessable', /sip_extension/);
      expect(await countAgents(t)).toBe(before);
    });

    it('accepts a 64-character extension of every allowed character class', async () => {
      const ext = `a.B_9-${'z'.repeat(58)}`;
      expect(await create(tenant, { sip_extension: ext })).toMatchObject({ sip_extension: ext });
    });

    it.each([
      ['a blank name', { name: '  ' }, /name/],
      ['an invalid email', { email: 'nope' }, /email/],
    ])('refuses %s with 422 unprocessable', async (_label, body, message) => {
      expectError(await post(tenant.apiKey, '/v1/agents', { name: 'X', email: uniqueEmail(), ...body }), 422, 'unprocessable', message);
    });

    it.each([
      ['name', { email: 'a@b.io' }],
      ['email', { name: 'A' }],
      ['name', { name: 1, email: 'a@b.io' }],
      ['email', { name: 'A', email: null }],
      ['role', { name: 'A', email: 'a@b.io', role: 'owner' }],
      ['sip_extension', { name: 'A', email: 'a@b.io', sip_extension: 1001 }],
      ['presence', { name: 'A', email: 'a@b.io', presence: 'available' }],
      ['id', { name: 'A', email: 'a@b.io', id: randomUUID() }],
    ])('answers a bad body (%s) with 400 bad_request naming the field', async (field, body) => {
      expectError(await post(tenant.apiKey, '/v1/agents', body), 400, 'bad_request', new RegExp(field));
    });

    it('answers 400 for malformed JSON, 415 for a non-JSON body and 413 for a body over 8 MiB', async () => {
      expectError(
        await app.request('POST', '/v1/agents', { token: tenant.apiKey, rawBody: '{"name":', headers: { 'content-type': 'application/json' } }),
        400,
        'bad_request',
      );
      expectError(
        await app.request('POST', '/v1/agents', { token: tenant.apiKey, rawBody: '{}', headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      );
      expectError(
        await app.request('POST', '/v1/agents', { token: tenant.apiKey, headers: { 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) } }),
        413,
        'payload_too_large',
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('GET /v1/agents and /v1/agents/{id}', () => {
    it("lists the tenant's agents (the provisioned admin first) and never another tenant's", async () => {
      const t = await provisionTenant(app);
      const a = await create(t);
      const b = await create(t, { role: 'supervisor' });
      const res = await app.request('GET', '/v1/agents', { token: t.apiKey });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['agents']);
      expect(res.body.agents.map((x: { id: string }) => x.id)).toEqual([t.adminAgentId, a.id, b.id]);
      expect(res.body.agents[0]).toMatchObject({ role: 'admin', tenant_id: t.tenantId });
      for (const agent of res.body.agents) expect(Object.keys(agent)).toEqual(FIELDS);
      const others = (await app.request('GET', '/v1/agents', { token: other.apiKey })).body.agents.map((x: { id: string }) => x.id);
      expect(others).not.toContain(a.id);
    });

    it('shows login_enabled true exactly when a widget-login password is set', async () => {
      const a = await create(tenant);
      expect(a.login_enabled).toBe(false);
      await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.update({ where: { id: a.id }, data: { loginPasswordHash: 'pbkdf2$x', loginPasswordSetAt: new Date() } }));
      expect((await get(tenant.apiKey, a.id)).body.agent.login_enabled).toBe(true);
      expect((await app.request('GET', '/v1/agents', { token: tenant.apiKey })).body.agents.find((x: { id: string }) => x.id === a.id).login_enabled).toBe(true);
    });

    it('reads one agent; 404 for unknown, malformed and foreign ids', async () => {
      const a = await create(tenant);
      expect((await get(tenant.apiKey, a.id)).body).toEqual({ agent: a });
      expectError(await get(tenant.apiKey, randomUUID()), 404, 'not_found');
      expectError(await get(tenant.apiKey, 'not-a-uuid'), 404, 'not_found');
      expectError(await get(other.apiKey, a.id), 404, 'not_found');
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('POST /v1/agents/checkin and /checkout', () => {
    it('checks an offline seat in with its softphone bootstrap; a repeat is idempotent; audited', async () => {
      const a = await create(tenant);
      const res = await post(tenant.apiKey, '/v1/agents/checkin', { sip_extension: a.sip_extension, device_mode: 'external' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['agent', 'softphone']);
      expect(res.body.agent).toMatchObject({ id: a.id, presence: 'available', device_mode: 'external' });
      expect(Object.keys(res.body.agent)).toEqual(FIELDS);
      expect(res.body.softphone).toEqual({
        sip_extension: a.sip_extension,
        domain: null,
        wss_url: null,
        device_mode: 'external',
        sip_username: null,
        sip_password: null,
        sip_credential_expires_at: null,
      });

      const again = await post(tenant.apiKey, '/v1/agents/checkin', { sip_extension: a.sip_extension });
      expect(again.status).toBe(200);
      expect(again.body.agent).toEqual(res.body.agent);
      expect((await audits(tenant, a.id)).map((r) => r.action)).toEqual(['agent.created', 'agent.checked_in']);
      expect((await audits(tenant, a.id))[1]!.payload).toMatchObject({ from: 'offline', to: 'available', device_mode: 'external' });

      // A repeat that changes device_mode writes only that.
      const mode = await post(tenant.apiKey, '/v1/agents/checkin', { sip_extension: a.sip_extension, device_mode: 'browser' });
      expect(mode.body.agent).toMatchObject({ presence: 'available', device_mode: 'browser' });
      expect(mode.body.softphone).toMatchObject({ device_mode: 'browser', sip_username: expect.any(String), sip_password: expect.any(String) });
      expect((await audits(tenant, a.id)).map((r) => r.action)).toEqual(['agent.created', 'agent.checked_in', 'agent.device_mode_changed']);
    });

    it.each(['ringing', 'on_call', 'wrap_up', 'paused'] as const)('refuses check-in of a %s seat with 409', async (presence) => {
      const a = await create(tenant);
      await setPresence(tenant, a.id, presence);
      expectError(await post(tenant.apiKey, '/v1/agents/checkin', { sip_extension: a.sip_extension }), 409, 'conflict', new RegExp(presence));
      expect((await get(tenant.apiKey, a.id)).body.agent.presence).toBe(presence);
    });

    it('refuses check-in of an inactive agent with 409', async () => {
      const a = await create(tenant);
      await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.update({ where: { id: a.id }, data: { status: 'inactive' } }));
      expectError(await post(tenant.apiKey, '/v1/agents/checkin', { sip_extension: a.sip_extension }), 409, 'conflict', /inactive/);
    });

    it.each(['offline', 'available', 'ringing', 'on_call', 'wrap_up', 'paused'] as const)('checks a %s seat out (idempotent from offline)', async (presence) => {
      const a = await create(tenant);
      await setPresence(tenant, a.id, presence);
      const res = await post(tenant.apiKey, '/v1/agents/checkout', { sip_extension: a.sip_extension });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['agent', 'sip_teardown']);
      expect(res.body.agent).toMatchObject({ id: a.id, presence: 'offline' });
      expect(res.body.sip_teardown).toBe('ok');
      const actions = (await audits(tenant, a.id)).map((r) => r.action);
      expect(actions).toEqual(presence === 'offline' ? ['agent.created'] : ['agent.created', 'agent.checked_out']);
      // A repeat records no presence entry but runs the teardown again (how a failed one is retried).
      const again = await post(tenant.apiKey, '/v1/agents/checkout', { sip_extension: a.sip_extension });
      expect(again.body).toEqual({ agent: res.body.agent, sip_teardown: 'ok' });
      expect((await audits(tenant, a.id)).map((r) => r.action)).toEqual(actions);
      expect(await sipTeardowns(tenant, a.id)).toBe(2);
    });

    it('answers 404 for an extension no agent of the tenant has (another tenant\'s included)', async () => {
      const a = await create(tenant);
      for (const path of ['/v1/agents/checkin', '/v1/agents/checkout']) {
        expectError(await post(tenant.apiKey, path, { sip_extension: 'nobody-here' }), 404, 'not_found');
        expectError(await post(other.apiKey, path, { sip_extension: a.sip_extension }), 404, 'not_found');
      }
      expect((await get(tenant.apiKey, a.id)).body.agent.presence).toBe('offline');
    });

    it('answers 422 for an extension outside the alphabet and 400 for bad bodies', async () => {
      for (const path of ['/v1/agents/checkin', '/v1/agents/checkout']) {
        expectError(await post(tenant.apiKey, path, { sip_extension: 'a b' }), 422, 'unprocessable', /sip_extension/);
        expectError(await post(tenant.apiKey, path, {}), 400, 'bad_request', /sip_extension/);
        expectError(await post(tenant.apiKey, path, { sip_extension: 1001 }), 400, 'bad_request', /sip_extension/);
        expectError(await post(tenant.apiKey, path, { sip_extension: '1001', extra: 1 }), 400, 'bad_request', /extra/);
        expectError(
          await app.request('POST', path, { token: tenant.apiKey, rawBody: 'nope', headers: { 'content-type': 'application/json' } }),
          400,
          'bad_request',
        );
      }
      expectError(await post(tenant.apiKey, '/v1/agents/checkin', { sip_extension: '1001', device_mode: 'desk' }), 400, 'bad_request', /device_mode/);
      expectError(await post(tenant.apiKey, '/v1/agents/checkout', { sip_extension: '1001', device_mode: 'browser' }), 400, 'bad_request', /device_mode/);
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('POST /v1/agents/{id}/pause, /resume, /wrap-up', () => {
    it('pauses an available seat, resumes it; audited', async () => {
      const a = await create(tenant);
      expect((await post(tenant.apiKey, '/v1/agents/checkin', { sip_extension: a.sip_extension })).status).toBe(200);
      const paused = await post(tenant.apiKey, `/v1/agents/${a.id}/pause`);
      expect(paused.status).toBe(200);
      expect(Object.keys(paused.body)).toEqual(['agent']);
      expect(paused.body.agent).toMatchObject({ id: a.id, presence: 'paused' });
      const resumed = await post(tenant.apiKey, `/v1/agents/${a.id}/resume`);
      expect(resumed.status).toBe(200);
      expect(resumed.body.agent).toMatchObject({ id: a.id, presence: 'available' });
      expect((await audits(tenant, a.id)).map((r) => r.action)).toEqual(['agent.created', 'agent.checked_in', 'agent.paused', 'agent.resumed']);
    });

    it('ends wrap-up (wrap_up → available); audited', async () => {
      const a = await create(tenant);
      await setPresence(tenant, a.id, 'wrap_up');
      const res = await post(tenant.apiKey, `/v1/agents/${a.id}/wrap-up`);
      expect(res.status).toBe(200);
      expect(res.body.agent).toMatchObject({ presence: 'available' });
      const rows = await audits(tenant, a.id);
      expect(rows.map((r) => r.action)).toEqual(['agent.created', 'agent.wrap_up_ended']);
      expect(rows[1]!.payload).toMatchObject({ from: 'wrap_up', to: 'available' });
    });

    it('clears the wrap-up deadline when wrap-up ends and at check-out, and keeps it on other moves', async () => {
      const until = new Date(Date.now() + 60_000);
      const withDeadline = async (presence: Presence) => {
        const a = await create(tenant);
        await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.update({ where: { id: a.id }, data: { presence, wrapUpUntil: until } }));
        return a;
      };
      const ended = await withDeadline('wrap_up');
      expect((await post(tenant.apiKey, `/v1/agents/${ended.id}/wrap-up`)).status).toBe(200);
      expect((await agentRow(tenant, ended.id)).wrapUpUntil).toBeNull();

      const out = await withDeadline('wrap_up');
      expect((await post(tenant.apiKey, '/v1/agents/checkout', { sip_extension: out.sip_extension })).status).toBe(200);
      expect(await agentRow(tenant, out.id)).toMatchObject({ presence: 'offline', wrapUpUntil: null });

      const onCall = await withDeadline('on_call');
      expect((await post(tenant.apiKey, '/v1/agents/checkout', { sip_extension: onCall.sip_extension })).status).toBe(200);
      expect((await agentRow(tenant, onCall.id)).wrapUpUntil).toBeNull();

      const paused = await withDeadline('available');
      expect((await post(tenant.apiKey, `/v1/agents/${paused.id}/pause`)).status).toBe(200);
      expect((await agentRow(tenant, paused.id)).wrapUpUntil).toEqual(until);
    });

    const allowed: Record<string, Presence> = { pause: 'available', resume: 'paused', 'wrap-up': 'wrap_up' };
    const presences: Presence[] = ['offline', 'available', 'ringing', 'on_call', 'wrap_up', 'paused'];
    const invalid = Object.entries(allowed).flatMap(([verb, from]) => presences.filter((p) => p !== from).map((p) => [verb, p] as const));
    it.each(invalid)('refuses %s from %s with 409 and changes nothing', async (verb, presence) => {
      const a = await create(tenant);
      await setPresence(tenant, a.id, presence);
      expectError(await post(tenant.apiKey, `/v1/agents/${a.id}/${verb}`), 409, 'conflict', new RegExp(presence));
      expect((await get(tenant.apiKey, a.id)).body.agent.presence).toBe(presence);
      expect((await audits(tenant, a.id)).map((r) => r.action)).toEqual(['agent.created']);
    });

    it('answers 404 for unknown, malformed and foreign ids', async () => {
      const a = await create(tenant);
      await setPresence(tenant, a.id, 'available');
      for (const verb of ['pause', 'resume', 'wrap-up']) {
        expectError(await post(tenant.apiKey, `/v1/agents/${randomUUID()}/${verb}`), 404, 'not_found');
        expectError(await post(tenant.apiKey, `/v1/agents/zzz/${verb}`), 404, 'not_found');
        expectError(await post(other.apiKey, `/v1/agents/${a.id}/${verb}`), 404, 'not_found');
      }
      expect((await get(tenant.apiKey, a.id)).body.agent.presence).toBe('available');
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('credentials and scope', () => {
    const routes = (id: string, ext: string): [string, string, unknown][] => [
      ['GET', '/v1/agents', undefined],
      ['POST', '/v1/agents', { name: 'W', email: uniqueEmail('w') }],
      ['GET', `/v1/agents/${id}`, undefined],
      ['POST', '/v1/agents/checkin', { sip_extension: ext }],
      ['POST', '/v1/agents/checkout', { sip_extension: ext }],
      ['POST', `/v1/agents/${id}/pause`, undefined],
      ['POST', `/v1/agents/${id}/resume`, undefined],
      ['POST', `/v1/agents/${id}/wrap-up`, undefined],
    ];

    it('answers 401 without a credential or with an unknown one', async () => {
      const a = await create(tenant);
      for (const [method, path, body] of routes(a.id, a.sip_extension)) {
        expectError(await app.request(method, path, { body }), 401, 'unauthorized');
        expectError(await app.request(method, path, { token: `dd_${'y'.repeat(43)}`, body }), 401, 'unauthorized');
      }
      expect((await get(tenant.apiKey, a.id)).body.agent).toEqual(a);
    });

    it('answers 403 for a suspended tenant', async () => {
      const t = await provisionTenant(app);
      const a = await create(t);
      expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN })).status).toBe(200);
      for (const [method, path, body] of routes(a.id, a.sip_extension)) expectError(await app.request(method, path, { token: t.apiKey, body }), 403, 'forbidden');
    });

    it('answers 403 for a widget token on the roster routes (list, create)', async () => {
      const a = await create(tenant);
      const { token } = await insertAgentWidgetToken(app, tenant.tenantId, a.id);
      const before = await countAgents(tenant);
      expectError(await app.request('GET', '/v1/agents', { token }), 403, 'forbidden');
      expectError(await post(token, '/v1/agents', { name: 'W', email: uniqueEmail('w') }), 403, 'forbidden');
      expect(await countAgents(tenant)).toBe(before);
    });

    it('lets a widget token act on its own agent: read, check in, pause, resume, end wrap-up, check out', async () => {
      const a = await create(tenant);
      const { token } = await insertAgentWidgetToken(app, tenant.tenantId, a.id);
      expect((await get(token, a.id)).body).toEqual({ agent: a });
      const checkedIn = await post(token, '/v1/agents/checkin', { sip_extension: a.sip_extension });
      expect(checkedIn.status).toBe(200);
      expect(checkedIn.body.agent.presence).toBe('available');
      expect((await post(token, `/v1/agents/${a.id}/pause`)).body.agent.presence).toBe('paused');
      expect((await post(token, `/v1/agents/${a.id}/resume`)).body.agent.presence).toBe('available');
      await setPresence(tenant, a.id, 'wrap_up');
      expect((await post(token, `/v1/agents/${a.id}/wrap-up`)).body.agent.presence).toBe('available');
      const out = await post(token, '/v1/agents/checkout', { sip_extension: a.sip_extension });
      expect(out.status).toBe(200);
      expect(out.body).toMatchObject({ agent: { presence: 'offline' }, sip_teardown: 'ok' });
      const rows = await audits(tenant, a.id);
      expect(rows.map((r) => r.action)).toEqual(['agent.created', 'agent.checked_in', 'agent.paused', 'agent.resumed', 'agent.wrap_up_ended', 'agent.checked_out']);
      for (const r of rows.slice(1)) expect(r).toMatchObject({ actorType: 'agent', actorId: a.id });
    });

    it("answers 403 when a widget token names another agent of its tenant, 404 for an unknown or another tenant's", async () => {
      const own = await create(tenant);
      const peer = await create(tenant);
      const foreign = await create(other);
      await setPresence(tenant, peer.id, 'available');
      const { token } = await insertAgentWidgetToken(app, tenant.tenantId, own.id);

      expectError(await get(token, peer.id), 403, 'forbidden', /own agent/);
      for (const verb of ['pause', 'resume', 'wrap-up']) expectError(await post(token, `/v1/agents/${peer.id}/${verb}`), 403, 'forbidden', /own agent/);
      for (const path of ['/v1/agents/checkin', '/v1/agents/checkout']) {
        expectError(await post(token, path, { sip_extension: peer.sip_extension }), 403, 'forbidden', /own agent/);
        expectError(await post(token, path, { sip_extension: 'nobody-here' }), 404, 'not_found');
        expectError(await post(token, path, { sip_extension: foreign.sip_extension }), 404, 'not_found');
      }
      for (const id of [randomUUID(), foreign.id, 'zzz']) {
        expectError(await get(token, id), 404, 'not_found');
        for (const verb of ['pause', 'resume', 'wrap-up']) expectError(await post(token, `/v1/agents/${id}/${verb}`), 404, 'not_found');
      }
      expect(await agentRow(tenant, peer.id)).toMatchObject({ presence: 'available' });
      expect((await audits(tenant, peer.id)).map((r) => r.action)).toEqual(['agent.created']);
      expect(await sipTeardowns(tenant, peer.id)).toBe(0);
    });
  });
});
