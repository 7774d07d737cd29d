import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueEmail, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';
import { randomLoopback } from '../helpers/client-address';
import { authMetrics } from '../../src/lib/auth-metrics';

const MiB = 1024 * 1024;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// SPEC "WidgetToken", in order.
const TOKEN_FIELDS = ['id', 'agent_id', 'label', 'allowed_origin_id', 'expires_at', 'session_expires_at', 'revoked_at', 'last_used_at', 'created_at', 'updated_at'];
const PASSWORD = 'widget login password 1';
const AGENT_LOGIN_BUDGET = 10;

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

const uniqueOrigin = () => `https://crm-${randomUUID().slice(0, 8)}.example`;

interface LoginSetup {
  tenant: ProvisionedTenant;
  origin: string;
  originId: string;
  agentId: string;
  email: string;
}

describe('agent (widget) login and widget-config', () => {
  let app: TestApp;

  const addOrigin = async (t: ProvisionedTenant, origin = uniqueOrigin()) => {
    const res = await app.request('POST', '/v1/widget_origins', { token: t.apiKey, body: { origin } });
    expect(res.status).toBe(201);
    return res.body.widget_origin as { id: string; origin: string };
  };
  const addAgent = async (t: ProvisionedTenant, email = uniqueEmail('agent')) => {
    const res = await app.request('POST', '/v1/agents', { token: t.apiKey, body: { name: 'Widget Agent', email } });
    expect(res.status).toBe(201);
    return res.body.agent.id as string;
  };
  const setCredential = async (t: ProvisionedTenant, agentId: string, password = PASSWORD) => {
    const res = await app.request('POST', `/v1/agents/${agentId}/credential`, { token: t.apiKey, body: { password } });
    expect({ status: res.status, body: res.status === 200 ? null : res.body }).toEqual({ status: 200, body: null });
    return res.body;
  };
  /** A tenant with an enabled origin and an agent whose widget login is set. */
  const setup = async (): Promise<LoginSetup> => {
    const tenant = await provisionTenant(app);
    const o = await addOrigin(tenant);
    const email = uniqueEmail('agent');
    const agentId = await addAgent(tenant, email);
    await setCredential(tenant, agentId);
    return { tenant, origin: o.origin, originId: o.id, agentId, email };
  };
  // Each attempt from its own address: failures here never spend the per-address budget of another test.
  const login = (origin: string | undefined, body: unknown, localAddress = randomLoopback()) =>
    app.request('POST', '/v1/auth/agent-login', { body, headers: origin === undefined ? {} : { origin }, localAddress });
  const widgetConfig = (origin?: string) => app.request('GET', '/v1/auth/widget-config', { headers: origin === undefined ? {} : { origin } });
  const me = (token: string) => app.request('GET', '/v1/me', { token });
  const tokenRows = (t: ProvisionedTenant, agentId: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) => tx.widgetToken.findMany({ where: { agentId }, orderBy: { createdAt: 'asc' } }));
  const suspend = async (t: ProvisionedTenant) =>
    expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN })).status).toBe(200);

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  describe('GET /v1/auth/widget-config', () => {
    it("answers the tenant's public widget bootstrap for an enabled Origin, uncacheable and varying by Origin", async () => {
      const t = await provisionTenant(app);
      const a = await addOrigin(t);
      const b = await addOrigin(t);
      const c = await addOrigin(t);
      await app.request('DELETE', `/v1/widget_origins/${b.id}`, { token: t.apiKey });
      const res = await widgetConfig(c.origin);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        tenant: { name: t.name },
        origins: [a.origin, c.origin],
        agent_login: { path: '/v1/auth/agent-login' },
        token_ttl_seconds: app.config.WIDGET_TOKEN_TTL_SECONDS,
        session_cap_seconds: app.config.WIDGET_SESSION_CAP_SECONDS,
      });
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.vary).toMatch(/Origin/);
      // The header is matched in its canonical form.
      expect((await widgetConfig(`${a.origin.toUpperCase()}:443`)).body).toEqual(res.body);
    });

    it('answers one identical 404 for no, malformed, unknown and disabled Origin, still uncacheable', async () => {
      const t = await provisionTenant(app);
      const o = await addOrigin(t);
      await app.request('DELETE', `/v1/widget_origins/${o.id}`, { token: t.apiKey });
      const answers = [await widgetConfig(), await widgetConfig('null'), await widgetConfig(`${o.origin}/path`), await widgetConfig(uniqueOrigin()), await widgetConfig(o.origin)];
      for (const res of answers) {
        expectError(res, 404, 'not_found');
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.headers.vary).toMatch(/Origin/);
      }
      expect(new Set(answers.map((r) => r.text)).size).toBe(1);
    });

    it('answers 403 for an origin of a suspended tenant', async () => {
      const t = await provisionTenant(app);
      const o = await addOrigin(t);
      await suspend(t);
      expectError(await widgetConfig(o.origin), 403, 'forbidden');
    });
  });

  describe('POST /v1/auth/agent-login', () => {
    it('logs the agent in: a ddw_ token bound to the matched origin, the WidgetToken and the agent; audited', async () => {
      const s = await setup();
      const res = await login(s.origin, { email: s.email.toUpperCase(), password: PASSWORD });
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.vary).toMatch(/Origin/);
      expect(Object.keys(res.body)).toEqual(['token', 'widget_token', 'agent']);
      expect(res.body.token).toMatch(/^ddw_/);
      expect(Object.keys(res.body.widget_token)).toEqual(TOKEN_FIELDS);
      expect(res.body.widget_token).toEqual({
        id: expect.stringMatching(UUID_RE),
        agent_id: s.agentId,
        label: 'agent-login',
        allowed_origin_id: s.originId,
        expires_at: expect.stringMatching(ISO_RE),
        session_expires_at: expect.stringMatching(ISO_RE),
        revoked_at: null,
        last_used_at: null,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });
      const ttlMs = Date.parse(res.body.widget_token.expires_at) - Date.parse(res.body.widget_token.created_at);
      expect(Math.abs(ttlMs - app.config.WIDGET_TOKEN_TTL_SECONDS * 1000)).toBeLessThan(2000);
      expect(res.body.agent).toMatchObject({ id: s.agentId, email: s.email, login_enabled: true, status: 'active' });
      expect(res.text).not.toContain(PASSWORD);

      const [row] = await tokenRows(s.tenant, s.agentId);
      expect(row).toMatchObject({ id: res.body.widget_token.id, issuedVia: 'agent_login' });
      expect(row!.tokenHash).not.toContain(res.body.token);
      const audit = await withTenant(app.deps.db, s.tenant.tenantId, (tx) => tx.auditLog.findFirstOrThrow({ where: { action: 'agent.widget_login', subjectId: s.agentId } }));
      expect(audit).toMatchObject({ actorType: 'agent', actorId: s.agentId, subjectType: 'agent' });
      expect(audit.payload).toEqual({ widget_token_id: row!.id, origin_id: s.originId, origin: s.origin, superseded_tokens: [] });
      expect(JSON.stringify(audit.payload)).not.toContain(s.email);
    });

    it('mints a bearer that works on an allowlisted route, is 403 on a management route, and dies with a credential rotation', async () => {
      const s = await setup();
      const { token } = (await login(s.origin, { email: s.email, password: PASSWORD })).body;
      const ok = await me(token);
      expect(ok.status).toBe(200);
      expect(ok.body.tenant.id).toBe(s.tenant.tenantId);
      expectError(await app.request('GET', '/v1/agents', { token }), 403, 'forbidden');

      await setCredential(s.tenant, s.agentId, 'a brand new password');
      expectError(await me(token), 401, 'unauthorized');
      expectError(await login(s.origin, { email: s.email, password: PASSWORD }), 401, 'unauthorized');
      expect((await login(s.origin, { email: s.email, password: 'a brand new password' })).status).toBe(200);
    });

    it("supersedes the agent's previous vigent tokens (tenant-minted ones too) without a SIP teardown", async () => {
      const s = await setup();
      const minted = await insertAgentWidgetToken(app, s.tenant.tenantId, s.agentId);
      const first = await login(s.origin, { email: s.email, password: PASSWORD });
      const second = await login(s.origin, { email: s.email, password: PASSWORD });
      expect(second.status).toBe(200);
      expectError(await me(first.body.token), 401, 'unauthorized');
      expectError(await me(minted.token), 401, 'unauthorized');
      expect((await me(second.body.token)).status).toBe(200);
      const rows = await tokenRows(s.tenant, s.agentId);
      expect(rows.map((r) => [r.id, r.revokedReason])).toEqual([
        [minted.id, 'superseded_by_login'],
        [first.body.widget_token.id, 'superseded_by_login'],
        [second.body.widget_token.id, null],
      ]);
      const audits = await withTenant(app.deps.db, s.tenant.tenantId, (tx) =>
        tx.auditLog.findMany({ where: { subjectId: s.agentId, action: { in: ['agent.widget_login', 'agent.sip_teardown'] } }, orderBy: { occurredAt: 'asc' } }),
      );
      expect(audits.map((a) => a.action)).toEqual(['agent.widget_login', 'agent.widget_login']);
      expect(audits.map((a) => (a.payload as { superseded_tokens: string[] }).superseded_tokens)).toEqual(
        expect.arrayContaining([[minted.id], [first.body.widget_token.id]]),
      );
    });

    it('answers one identical 401 for missing, unknown or disabled Origin, unknown email, wrong password, login not enabled and inactive agent', async () => {
      const s = await setup();
      const noLogin = uniqueEmail('nologin');
      await addAgent(s.tenant, noLogin);
      const inactive = uniqueEmail('inactive');
      const inactiveId = await addAgent(s.tenant, inactive);
      await setCredential(s.tenant, inactiveId);
      await withTenant(app.deps.db, s.tenant.tenantId, (tx) => tx.agent.update({ where: { id: inactiveId }, data: { status: 'inactive' } }));
      const elsewhere = await setup();
      const disabled = await setup();
      await app.request('DELETE', `/v1/widget_origins/${disabled.originId}`, { token: disabled.tenant.apiKey });

      const cases: Array<[string, Promise<HttpResult>]> = [
        ['no Origin', login(undefined, { email: s.email, password: PASSWORD })],
        ['the opaque Origin', login('null', { email: s.email, password: PASSWORD })],
        ['an unknown Origin', login(uniqueOrigin(), { email: s.email, password: PASSWORD })],
        ["another tenant's Origin", login(elsewhere.origin, { email: s.email, password: PASSWORD })],
        ['a disabled Origin', login(disabled.origin, { email: disabled.email, password: PASSWORD })],
        ['an unknown email', login(s.origin, { email: uniqueEmail('ghost'), password: PASSWORD })],
        ['a wrong password', login(s.origin, { email: s.email, password: `${PASSWORD}!` })],
        ['login not enabled', login(s.origin, { email: noLogin, password: PASSWORD })],
        ['an inactive agent', login(s.origin, { email: inactive, password: PASSWORD })],
      ];
      const answers = await Promise.all(cases.map(async ([label, res]) => ({ label, res: await res })));
      for (const { label, res } of answers) {
        expect({ label, status: res.status, body: res.body }).toEqual({ label, status: 401, body: { error: { code: 'unauthorized', message: 'invalid email or password' } } });
        expect({ label, cache: res.headers['cache-control'], vary: res.headers.vary }).toEqual({ label, cache: 'no-store', vary: 'Origin' });
      }
      expect(new Set(answers.map((a) => a.res.text)).size).toBe(1);
      expect(await tokenRows(s.tenant, s.agentId)).toEqual([]);
    });

    it('answers 403 for correct credentials of a suspended tenant, 401 for wrong ones', async () => {
      const s = await setup();
      await suspend(s.tenant);
      expectError(await login(s.origin, { email: s.email, password: `${PASSWORD}?` }), 401, 'unauthorized');
      expectError(await login(s.origin, { email: s.email, password: PASSWORD }), 403, 'forbidden', /suspended/);
      expect(await tokenRows(s.tenant, s.agentId)).toEqual([]);
    });

    it('answers 401 once the widget login is disabled', async () => {
      const s = await setup();
      const { token } = (await login(s.origin, { email: s.email, password: PASSWORD })).body;
      expect((await app.request('DELETE', `/v1/agents/${s.agentId}/credential`, { token: s.tenant.apiKey })).status).toBe(200);
      expectError(await login(s.origin, { email: s.email, password: PASSWORD }), 401, 'unauthorized');
      expectError(await me(token), 401, 'unauthorized');
    });

    it('rate limits per {tenant, email} before the password is checked; another email is not limited', async () => {
      const s = await setup();
      for (let i = 0; i < AGENT_LOGIN_BUDGET; i += 1) {
        expectError(await login(s.origin, { email: i % 2 ? s.email : s.email.toUpperCase(), password: 'wrong password here' }), 401, 'unauthorized');
      }
      // The right password does not get through either: the budget is spent first.
      expectError(await login(s.origin, { email: s.email, password: PASSWORD }), 429, 'rate_limited');
      expect(await tokenRows(s.tenant, s.agentId)).toEqual([]);

      const otherEmail = uniqueEmail('other');
      await setCredential(s.tenant, await addAgent(s.tenant, otherEmail));
      expect((await login(s.origin, { email: otherEmail, password: PASSWORD })).status).toBe(200);
      // The same email in another tenant is another key.
      const t2 = await provisionTenant(app);
      const o2 = await addOrigin(t2);
      await setCredential(t2, await addAgent(t2, s.email));
      expect((await login(o2.origin, { email: s.email, password: PASSWORD })).status).toBe(200);
    });

    it('answers an unknown or disabled Origin without hashing and without spending a budget', async () => {
      const disabled = await setup();
      await app.request('DELETE', `/v1/widget_origins/${disabled.originId}`, { token: disabled.tenant.apiKey });
      const address = randomLoopback();
      const other = await setup();
      const known = await login(other.origin, { email: uniqueEmail('ghost'), password: PASSWORD }, address);
      expect(known.status).toBe(401);
      const before = await authMetrics.hashCount();
      // Far past every budget: 30 guesses from one address through origins that name no enabled widget.
      for (let i = 0; i < 30; i += 1) {
        const origin = i % 2 ? uniqueOrigin() : disabled.origin;
        const res = await login(origin, { email: i % 3 ? disabled.email : uniqueEmail('guess'), password: PASSWORD }, address);
        // The same body as a wrong credential through a known origin.
        expect({ status: res.status, text: res.text }).toEqual({ status: 401, text: known.text });
      }
      expect(await authMetrics.hashCount()).toBe(before);
    });

    it.each([
      ['a missing email', { password: PASSWORD }, /email.*required/],
      ['a missing password', { email: 'a@b.example' }, /password.*required/],
      ['a non-string password', { email: 'a@b.example', password: 123456789012 }, /password/],
      ['an unknown key', { email: 'a@b.example', password: PASSWORD, tenant_id: randomUUID() }, /tenant_id/],
    ])('answers 400 bad_request for %s', async (_label, body, message) => {
      expectError(await login(uniqueOrigin(), body), 400, 'bad_request', message);
    });

    it('answers 400 for malformed JSON, 415 for a non-JSON body and 413 for a body over 8 MiB', async () => {
      const post = (headers: Record<string, string>, rawBody?: string) => app.request('POST', '/v1/auth/agent-login', { rawBody, headers });
      expectError(await post({ 'content-type': 'application/json' }, '{"email":'), 400, 'bad_request');
      expectError(await post({ 'content-type': 'text/plain' }, '{}'), 415, 'unsupported_media_type');
      expectError(await post({ 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) }), 413, 'payload_too_large');
    });
  });
});
