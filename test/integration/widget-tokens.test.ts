import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { sha256Hex } from '../../src/lib/tokens';
import { pointSwitchAtDirectory, runWorker, startSwitchRig, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { createUserSession, provisionTenant, startTestApp, uniqueEmail, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';

jest.setTimeout(60_000);

// A token lives 120 s and its session 180 s: short enough to see the cap, long enough for a test.
const TTL = 120;
const CAP = 180;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// SPEC "WidgetToken", in order.
const FIELDS = ['id', 'agent_id', 'label', 'allowed_origin_id', 'expires_at', 'session_expires_at', 'revoked_at', 'last_used_at', 'created_at', 'updated_at'];

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let tenant: ProvisionedTenant;
let other: ProvisionedTenant;
const taskQueue = `widget-tokens-${randomUUID()}`;

beforeAll(async () => {
  rig = await startSwitchRig();
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, WIDGET_TOKEN_TTL_SECONDS: String(TTL), WIDGET_SESSION_CAP_SECONDS: String(CAP) }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
  tenant = await provisionTenant(app);
  other = await provisionTenant(app);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

const post = (token: string | undefined, path: string, body?: unknown) => app.request('POST', path, { token, body });
const mint = (t: ProvisionedTenant, body: Record<string, unknown>) => post(t.apiKey, '/v1/widget_tokens', body);
const revoke = (token: string, id: string) => app.request('DELETE', `/v1/widget_tokens/${id}`, { token });
const me = (token: string) => app.request('GET', '/v1/me', { token });

async function createAgent(t: ProvisionedTenant, body: Record<string, unknown> = {}) {
  const res = await post(t.apiKey, '/v1/agents', { name: 'Seat', email: uniqueEmail('w'), sip_extension: `w-${randomUUID().slice(0, 8)}`, ...body });
  expect(res.status).toBe(201);
  return res.body.agent as { id: string; sip_extension: string };
}

async function minted(t: ProvisionedTenant, agentId: string, body: Record<string, unknown> = {}) {
  const res = await mint(t, { agent_id: agentId, ...body });
  expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
  return res.body as { widget_token: Record<string, any>; token: string };
}

async function createOrigin(t: ProvisionedTenant, enabled = true) {
  return withTenant(app.deps.db, t.tenantId, (tx) =>
    tx.widgetOrigin.create({ data: { tenantId: t.tenantId, origin: `https://w-${randomUUID().slice(0, 8)}.example`, enabled, disabledAt: enabled ? null : new Date() } }),
  );
}

const tokenRow = (t: ProvisionedTenant, id: string) => withTenant(app.deps.db, t.tenantId, (tx) => tx.widgetToken.findUniqueOrThrow({ where: { id } }));
const setTokenTimes = (t: ProvisionedTenant, id: string, expiresInS: number, sessionInS?: number) =>
  withTenant(app.deps.db, t.tenantId, (tx) =>
    sessionInS === undefined
      ? tx.$executeRaw`UPDATE widget_tokens SET expires_at = now() + make_interval(secs => ${expiresInS}) WHERE id = ${id}::uuid`
      : tx.$executeRaw`UPDATE widget_tokens SET expires_at = now() + make_interval(secs => ${expiresInS}), session_expires_at = now() + make_interval(secs => ${sessionInS}) WHERE id = ${id}::uuid`,
  );
const auditsOf = (t: ProvisionedTenant, subjectId: string) =>
  withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findMany({ where: { subjectId }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }));

// -------------------------------------------------------------------------------------------------
describe('POST /v1/widget_tokens', () => {
  it('mints a ddw_ token (shown once, sha256 at rest) with server-set lifetimes; it authenticates; audited without the token', async () => {
    const a = await createAgent(tenant);
    const res = await mint(tenant, { agent_id: a.id });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['widget_token', 'token']);
    const { widget_token: w, token } = res.body;
    expect(token).toMatch(/^ddw_/);
    expect(Object.keys(w)).toEqual(FIELDS);
    expect(w).toEqual({
      id: expect.stringMatching(UUID_RE),
      agent_id: a.id,
      label: '',
      allowed_origin_id: null,
      expires_at: expect.stringMatching(ISO_RE),
      session_expires_at: expect.stringMatching(ISO_RE),
      revoked_at: null,
      last_used_at: null,
      created_at: expect.stringMatching(ISO_RE),
      updated_at: expect.stringMatching(ISO_RE),
    });
    const created = Date.parse(w.created_at);
    expect(Date.parse(w.expires_at) - created).toBe(TTL * 1000);
    expect(Date.parse(w.session_expires_at) - created).toBe(CAP * 1000);
    expect(JSON.stringify(res.body.widget_token)).not.toContain(sha256Hex(token));
    expect((await tokenRow(tenant, w.id)).tokenHash).toBe(sha256Hex(token));

    const who = await me(token);
    expect(who.status).toBe(200);
    expect(who.body.tenant.id).toBe(tenant.tenantId);

    const rows = await auditsOf(tenant, w.id);
    expect(rows.map((r) => r.action)).toEqual(['widget_token.minted']);
    expect(rows[0]).toMatchObject({ actorType: 'api_key', subjectType: 'widget_token' });
    expect(rows[0]!.payload).toMatchObject({ agent_id: a.id, allowed_origin_id: null, expires_at: w.expires_at, session_expires_at: w.session_expires_at });
    expect(JSON.stringify(rows[0]!.payload)).not.toContain(token);
    expect(JSON.stringify(rows[0]!.payload)).not.toContain(sha256Hex(token));
  });

  it('takes a label and an enabled origin of the tenant; a dashboard session may mint', async () => {
    const a = await createAgent(tenant);
    const origin = await createOrigin(tenant);
    const session = await createUserSession(app, tenant);
    const res = await post(session.token, '/v1/widget_tokens', { agent_id: a.id, label: 'x'.repeat(200), allowed_origin_id: origin.id });
    expect(res.status).toBe(201);
    expect(res.body.widget_token).toMatchObject({ label: 'x'.repeat(200), allowed_origin_id: origin.id });
    expect((await auditsOf(tenant, res.body.widget_token.id))[0]).toMatchObject({ actorType: 'user', actorId: session.userId });
  });

  it.each([
    ['an unknown key, named', { agent_id: randomUUID(), token_hash: 'x' }, /token_hash/],
    ['a missing agent_id', { label: 'a' }, /agent_id/],
    ['a non-UUID agent_id', { agent_id: 'nope' }, /agent_id/],
    ['a label over 200 characters', { agent_id: randomUUID(), label: 'x'.repeat(201) }, /label/],
    ['a label of the wrong type', { agent_id: randomUUID(), label: 5 }, /label/],
    ['a non-UUID allowed_origin_id', { agent_id: randomUUID(), allowed_origin_id: 'https://a.example' }, /allowed_origin_id/],
    ['a tenant_id', { agent_id: randomUUID(), tenant_id: randomUUID() }, /tenant_id/],
  ])('answers 400 bad_request for %s', async (_label, body, message) => {
    expectError(await mint(tenant, body), 400, 'bad_request', message);
  });

  it('answers 400 for malformed JSON and 415 for a body that is not JSON', async () => {
    expectError(
      await app.request('POST', '/v1/widget_tokens', { token: tenant.apiKey, rawBody: '{"agent_id":', headers: { 'content-type': 'application/json' } }),
      400,
      'bad_request',
    );
    expectError(
      await app.request('POST', '/v1/widget_tokens', { token: tenant.apiKey, rawBody: '{}', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
  });

  it("answers 404 for an unknown or another tenant's agent, and an unknown, foreign or disabled origin; nothing is minted", async () => {
    const a = await createAgent(tenant);
    const foreignAgent = await createAgent(other);
    const foreignOrigin = await createOrigin(other);
    const disabledOrigin = await createOrigin(tenant, false);
    expectError(await mint(tenant, { agent_id: randomUUID() }), 404, 'not_found', /agent_id/);
    expectError(await mint(tenant, { agent_id: foreignAgent.id }), 404, 'not_found', /agent_id/);
    for (const originId of [randomUUID(), foreignOrigin.id, disabledOrigin.id]) {
      expectError(await mint(tenant, { agent_id: a.id, allowed_origin_id: originId }), 404, 'not_found', /allowed_origin_id/);
    }
    const count = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.widgetToken.count({ where: { agentId: a.id } }));
    expect(count).toBe(0);
  });

  it('answers 409 for an inactive agent and while the agent has a vigent token; revoked or expired ones do not count', async () => {
    const inactive = await createAgent(tenant);
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.update({ where: { id: inactive.id }, data: { status: 'inactive' } }));
    expectError(await mint(tenant, { agent_id: inactive.id }), 409, 'conflict', /inactive/);

    const a = await createAgent(tenant);
    const first = await minted(tenant, a.id);
    expectError(await mint(tenant, { agent_id: a.id }), 409, 'conflict', /vigent/);
    expect((await revoke(tenant.apiKey, first.widget_token.id)).status).toBe(200);
    const second = await minted(tenant, a.id);
    await setTokenTimes(tenant, second.widget_token.id, -1);
    await minted(tenant, a.id);
  });

  it('lets one of concurrent mints for an agent win (row lock on the agent)', async () => {
    const a = await createAgent(tenant);
    const results = await Promise.all(Array.from({ length: 5 }, () => mint(tenant, { agent_id: a.id })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
  });

  it("answers 429 rate_limited once the tenant's budget is used up, before the body is even read", async () => {
    const t = await provisionTenant(app);
    const a = await createAgent(t);
    for (let i = 0; i < 60; i += 1) expect(await app.deps.rateLimits.consume('widgetTokenMint', t.tenantId)).toBe(true);
    expectError(await mint(t, { agent_id: a.id }), 429, 'rate_limited');
    expectError(await mint(t, { bogus: 1 }), 429, 'rate_limited');
    // The budget is the tenant's: another tenant still mints.
    expect((await mint(tenant, { agent_id: (await createAgent(tenant)).id })).status).toBe(201);
  });
});

// -------------------------------------------------------------------------------------------------
describe('GET /v1/widget_tokens', () => {
  it('lists newest first in keyset pages, filters by agent, never shows a hash, never another tenant', async () => {
    const t = await provisionTenant(app);
    const a = await createAgent(t);
    const b = await createAgent(t);
    const ids: string[] = [];
    for (const agent of [a, b]) {
      const w = await minted(t, agent.id);
      ids.push(w.widget_token.id);
      expect((await revoke(t.apiKey, w.widget_token.id)).status).toBe(200);
      ids.push((await minted(t, agent.id)).widget_token.id);
    }
    await minted(other, (await createAgent(other)).id);

    const all = await app.request('GET', '/v1/widget_tokens', { token: t.apiKey });
    expect(all.status).toBe(200);
    expect(Object.keys(all.body)).toEqual(['widget_tokens', 'next_cursor']);
    expect(all.body.widget_tokens.map((w: { id: string }) => w.id)).toEqual([...ids].reverse());
    expect(all.body.next_cursor).toBeNull();
    for (const w of all.body.widget_tokens) expect(Object.keys(w)).toEqual(FIELDS);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: HttpResult = await app.request('GET', `/v1/widget_tokens?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { token: t.apiKey });
      expect(page.status).toBe(200);
      seen.push(...page.body.widget_tokens.map((w: { id: string }) => w.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    const onlyA = await app.request('GET', `/v1/widget_tokens?agent_id=${a.id}`, { token: t.apiKey });
    expect(onlyA.body.widget_tokens.map((w: { id: string }) => w.id)).toEqual([ids[1], ids[0]]);
    expect((await app.request('GET', `/v1/widget_tokens?agent_id=${randomUUID()}`, { token: t.apiKey })).body.widget_tokens).toEqual([]);
  });

  it.each([
    ['a limit of 0', 'limit=0'],
    ['a limit over 1000', 'limit=1001'],
    ['a cursor that does not decode', 'cursor=zzz'],
    ['a non-UUID agent_id', 'agent_id=nope'],
  ])('answers 400 bad_request for %s', async (_label, query) => {
    expectError(await app.request('GET', `/v1/widget_tokens?${query}`, { token: tenant.apiKey }), 400, 'bad_request');
  });
});

// -------------------------------------------------------------------------------------------------
describe('DELETE /v1/widget_tokens/{id}', () => {
  it('revokes (the token is 401 from then on), tears down the SIP endpoint left unused, and is idempotent', async () => {
    const a = await createAgent(tenant);
    const { widget_token: w, token } = await minted(tenant, a.id);
    const checkin = await post(token, '/v1/agents/checkin', { sip_extension: a.sip_extension });
    expect(checkin.status).toBe(200);
    pointSwitchAtDirectory(app, rig);
    await rig.sim.register({ extension: a.sip_extension, username: checkin.body.softphone.sip_username, password: checkin.body.softphone.sip_password });
    expect(await rig.sim.api('sim_registrations')).toContain(a.sip_extension);
    expect((await me(token)).status).toBe(200);

    const res = await revoke(tenant.apiKey, w.id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['widget_token', 'sip_teardown']);
    expect(res.body.sip_teardown).toBe('ok');
    expect(res.body.widget_token).toMatchObject({ id: w.id, revoked_at: expect.stringMatching(ISO_RE) });
    expect((await tokenRow(tenant, w.id)).revokedReason).toBe('revoked_by_api');
    expectError(await me(token), 401, 'unauthorized');
    expect(await rig.sim.api('sim_registrations')).not.toContain(a.sip_extension);
    const credentials = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agentSipCredential.findMany({ where: { agentId: a.id } }));
    expect(credentials.map((c) => c.revokedReason)).toEqual(['widget_token_revoked']);

    const again = await revoke(tenant.apiKey, w.id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ widget_token: res.body.widget_token, sip_teardown: 'ok' });
    expect((await auditsOf(tenant, w.id)).map((r) => r.action)).toEqual(['widget_token.minted', 'widget_token.revoked']);
  });

  it('skips the teardown while the agent keeps a vigent token (a successor)', async () => {
    const a = await createAgent(tenant);
    const first = await minted(tenant, a.id);
    expect((await revoke(tenant.apiKey, first.widget_token.id)).body.sip_teardown).toBe('ok');
    const successor = await minted(tenant, a.id);
    expect((await post(successor.token, '/v1/agents/checkin', { sip_extension: a.sip_extension })).status).toBe(200);

    const repeat = await revoke(tenant.apiKey, first.widget_token.id);
    expect(repeat.status).toBe(200);
    expect(repeat.body.sip_teardown).toBe('skipped');

    // Two vigent tokens (agent login supersedes, but the store allows it): revoking one skips too.
    const extra = await insertAgentWidgetToken(app, tenant.tenantId, a.id);
    expect((await revoke(tenant.apiKey, extra.id)).body.sip_teardown).toBe('skipped');
    expect((await me(successor.token)).status).toBe(200);
    const live = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agentSipCredential.count({ where: { agentId: a.id, revokedAt: null } }));
    expect(live).toBe(1);
  });

  it('answers failed when the switch link is down: the revocation stands', async () => {
    const a = await createAgent(tenant);
    const { widget_token: w, token } = await minted(tenant, a.id);
    const deps = app.deps as { esl: typeof app.deps.esl };
    const realEsl = deps.esl;
    deps.esl = null;
    try {
      const res = await revoke(tenant.apiKey, w.id);
      expect(res.status).toBe(200);
      expect(res.body.sip_teardown).toBe('failed');
    } finally {
      deps.esl = realEsl;
    }
    expectError(await me(token), 401, 'unauthorized');
    expect((await tokenRow(tenant, w.id)).revokedAt).not.toBeNull();
  });

  it("answers 404 for an unknown, malformed or another tenant's id, and revokes nothing", async () => {
    const a = await createAgent(tenant);
    const { widget_token: w, token } = await minted(tenant, a.id);
    expectError(await revoke(tenant.apiKey, randomUUID()), 404, 'not_found');
    expectError(await revoke(tenant.apiKey, 'not-a-uuid'), 404, 'not_found');
    expectError(await revoke(other.apiKey, w.id), 404, 'not_found');
    expect((await me(token)).status).toBe(200);
  });
});

// -------------------------------------------------------------------------------------------------
describe('POST /v1/widget_tokens/renew', () => {
  it('slides expires_at forward by the TTL; audited', async () => {
    const a = await createAgent(tenant);
    const { widget_token: w, token } = await minted(tenant, a.id);
    await setTokenTimes(tenant, w.id, 5);
    const before = await tokenRow(tenant, w.id);
    const res = await post(token, '/v1/widget_tokens/renew');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['widget_token']);
    expect(Object.keys(res.body.widget_token)).toEqual(FIELDS);
    const renewed = Date.parse(res.body.widget_token.expires_at);
    expect(renewed).toBeGreaterThan(before.expiresAt.getTime() + 60_000);
    expect(renewed).toBeLessThanOrEqual(Date.now() + TTL * 1000 + 5000);
    expect(res.body.widget_token.session_expires_at).toBe(w.session_expires_at);
    expect((await auditsOf(tenant, w.id)).map((r) => r.action)).toEqual(['widget_token.minted', 'widget_token.renewed']);
  });

  it('never slides past the session cap; once past it the token is 401', async () => {
    const a = await createAgent(tenant);
    const { widget_token: w, token } = await minted(tenant, a.id);
    await setTokenTimes(tenant, w.id, 5, 30);
    const res = await post(token, '/v1/widget_tokens/renew');
    expect(res.status).toBe(200);
    expect(res.body.widget_token.expires_at).toBe(res.body.widget_token.session_expires_at);
    expect(Date.parse(res.body.widget_token.session_expires_at)).toBeLessThan(Date.now() + 31_000);

    await setTokenTimes(tenant, w.id, -1, -1);
    expectError(await post(token, '/v1/widget_tokens/renew'), 401, 'unauthorized');
  });

  it('answers 401 for a revoked or expired token', async () => {
    const a = await createAgent(tenant);
    const first = await minted(tenant, a.id);
    await revoke(tenant.apiKey, first.widget_token.id);
    expectError(await post(first.token, '/v1/widget_tokens/renew'), 401, 'unauthorized');
    const second = await minted(tenant, a.id);
    await setTokenTimes(tenant, second.widget_token.id, -1);
    expectError(await post(second.token, '/v1/widget_tokens/renew'), 401, 'unauthorized');
    expectError(await me(second.token), 401, 'unauthorized');
  });

  it('answers 403 for an API key or a dashboard session', async () => {
    const session = await createUserSession(app, tenant);
    expectError(await post(tenant.apiKey, '/v1/widget_tokens/renew'), 403, 'forbidden');
    expectError(await post(session.token, '/v1/widget_tokens/renew'), 403, 'forbidden');
  });

  it("answers 429 rate_limited once the token's budget is used up; another token is unaffected", async () => {
    const a = await createAgent(tenant);
    const b = await createAgent(tenant);
    const { token } = await minted(tenant, a.id);
    const { token: otherToken } = await minted(tenant, b.id);
    for (let i = 0; i < 10; i += 1) expect((await post(token, '/v1/widget_tokens/renew')).status).toBe(200);
    expectError(await post(token, '/v1/widget_tokens/renew'), 429, 'rate_limited');
    expect((await post(otherToken, '/v1/widget_tokens/renew')).status).toBe(200);
  });
});

// -------------------------------------------------------------------------------------------------
describe('POST /v1/widget_tokens/introspect', () => {
  it('answers the widget session: token, agent, tenant, enabled origins, seconds left', async () => {
    const t = await provisionTenant(app);
    const a = await createAgent(t);
    const o1 = await createOrigin(t);
    const o2 = await createOrigin(t);
    await createOrigin(t, false);
    await createOrigin(other);
    const { widget_token: w, token } = await minted(t, a.id);
    const res = await post(token, '/v1/widget_tokens/introspect');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['widget_token', 'agent', 'tenant', 'origins', 'expires_in', 'session_expires_in']);
    expect(res.body.widget_token).toMatchObject({ ...w, last_used_at: expect.stringMatching(ISO_RE), updated_at: expect.stringMatching(ISO_RE) });
    expect(res.body.agent).toEqual((await app.request('GET', `/v1/agents/${a.id}`, { token: t.apiKey })).body.agent);
    expect(res.body.tenant).toEqual({ id: t.tenantId, name: t.name });
    expect(res.body.origins).toEqual([
      { id: o1.id, origin: o1.origin },
      { id: o2.id, origin: o2.origin },
    ]);
    expect(res.body.expires_in).toBeGreaterThan(TTL - 10);
    expect(res.body.expires_in).toBeLessThanOrEqual(TTL);
    expect(res.body.session_expires_in).toBeGreaterThan(CAP - 10);
    expect(res.body.session_expires_in).toBeLessThanOrEqual(CAP);
  });

  it("narrows the origins to the token's allowed origin (none once it is disabled)", async () => {
    const t = await provisionTenant(app);
    const a = await createAgent(t);
    await createOrigin(t);
    const allowed = await createOrigin(t);
    const { token } = await minted(t, a.id, { allowed_origin_id: allowed.id });
    expect((await post(token, '/v1/widget_tokens/introspect')).body.origins).toEqual([{ id: allowed.id, origin: allowed.origin }]);
    await withTenant(app.deps.db, t.tenantId, (tx) => tx.widgetOrigin.update({ where: { id: allowed.id }, data: { enabled: false, disabledAt: new Date() } }));
    expect((await post(token, '/v1/widget_tokens/introspect')).body.origins).toEqual([]);
  });

  it('answers 403 for an API key and 401 for a revoked token', async () => {
    expectError(await post(tenant.apiKey, '/v1/widget_tokens/introspect'), 403, 'forbidden');
    const a = await createAgent(tenant);
    const { widget_token: w, token } = await minted(tenant, a.id);
    await revoke(tenant.apiKey, w.id);
    expectError(await post(token, '/v1/widget_tokens/introspect'), 401, 'unauthorized');
  });
});

// -------------------------------------------------------------------------------------------------
describe('credentials and scope', () => {
  it('answers 401 without a credential and 403 for a widget token on the tenant-scope routes', async () => {
    const a = await createAgent(tenant);
    const { widget_token: w, token } = await minted(tenant, a.id);
    const routes: [string, string, unknown][] = [
      ['POST', '/v1/widget_tokens', { agent_id: a.id }],
      ['GET', '/v1/widget_tokens', undefined],
      ['DELETE', `/v1/widget_tokens/${w.id}`, undefined],
      ['POST', '/v1/widget_tokens/renew', undefined],
      ['POST', '/v1/widget_tokens/introspect', undefined],
    ];
    for (const [method, path, body] of routes) expectError(await app.request(method, path, { body }), 401, 'unauthorized');
    for (const [method, path, body] of routes.slice(0, 3)) expectError(await app.request(method, path, { token, body }), 403, 'forbidden');
    expect((await me(token)).status).toBe(200);
  });
});
