import { randomUUID } from 'node:crypto';
import { withTenant, withTenantSql } from '../../src/lib/tenancy';
import { aiAgentLifecycleWorkflow, aiAgentLifecycleWorkflowId, aiAgentStatusQuery } from '../../workflows/ai-agent.workflow';
import { runWorker, waitFor, type RunningWorker } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';

jest.setTimeout(60_000);

const MiB = 1024 * 1024;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// SPEC "AiAgent", in order.
const FIELDS = ['id', 'name', 'status', 'voice', 'disclosure', 'policy', 'handoff_rules', 'policy_version', 'created_at', 'updated_at'];
const EN = 'This is an automated call from Acme Recovery.';
const ES = 'Esta es una llamada automatizada de Acme Recovery.';
const HUMAN_RULE = { trigger: 'human_requested', params: {}, action: 'transfer', severity: 'hard', locked: true };

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

describe('AI agents', () => {
  let app: TestApp;
  let worker: RunningWorker;
  let tenant: ProvisionedTenant;
  let other: ProvisionedTenant;
  const taskQueue = `ai-agents-${randomUUID()}`;
  let nameSeq = 0;
  const uniqueAgentName = () => `Agent ${randomUUID().slice(0, 8)}-${++nameSeq}`;

  const call = (method: string, path: string, body?: unknown, token = tenant.apiKey) => app.request(method, path, { token, body });
  const create = async (body: Record<string, unknown> = {}, t: ProvisionedTenant = tenant) => {
    const res = await call('POST', '/v1/ai/agents', { name: uniqueAgentName(), disclosure: { text: EN }, ...body }, t.apiKey);
    expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
    return res.body.ai_agent;
  };
  const patch = (id: string, body: unknown, t: ProvisionedTenant = tenant) => call('PATCH', `/v1/ai/agents/${id}`, body, t.apiKey);
  const patchOk = async (id: string, body: unknown) => {
    const res = await patch(id, body);
    expect({ status: res.status, body: res.status === 200 ? null : res.body }).toEqual({ status: 200, body: null });
    return res.body.ai_agent;
  };
  const versions = (t: ProvisionedTenant, agentId: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) => tx.aiAgentVersion.findMany({ where: { aiAgentId: agentId }, orderBy: { policyVersion: 'asc' } }));
  const audits = (t: ProvisionedTenant, agentId: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findMany({ where: { subjectType: 'ai_agent', subjectId: agentId }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }));
  const row = (t: ProvisionedTenant, id: string) => withTenant(app.deps.db, t.tenantId, (tx) => tx.aiAgent.findUniqueOrThrow({ where: { id } }));
  const workflowStatus = (t: ProvisionedTenant, id: string) => app.deps.temporal!.workflow.getHandle(aiAgentLifecycleWorkflowId(t.tenantId, id)).query(aiAgentStatusQuery);

  beforeAll(async () => {
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue });
    worker = await runWorker(app, taskQueue);
    tenant = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
    other = await provisionTenant(app);
  });
  afterAll(async () => {
    await worker?.stop();
    await app?.close();
  });

  describe('create', () => {
    it('creates a draft at policy_version 1 with the documented defaults, a version-1 snapshot, an audit entry and a running lifecycle', async () => {
      const fresh = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
      const res = await call('POST', '/v1/ai/agents', { disclosure: { text: EN } }, fresh.apiKey);
      expect(res.status).toBe(201);
      const agent = res.body.ai_agent;
      expect(Object.keys(agent)).toEqual(FIELDS);
      expect(agent).toEqual({
        id: expect.stringMatching(UUID_RE),
        name: 'AI agent 1',
        status: 'draft',
        voice: { language: 'en-US', voice_id: 'default', pace: 0.5 },
        disclosure: { text: EN, mandated: true, locked: false },
        policy: { max_settlement_pct: 0, min_payment_cents: 2500, max_plan_months: 6, take_payments: 'none', prohibited: [] },
        handoff_rules: [{ id: expect.stringMatching(UUID_RE), ...HUMAN_RULE }],
        policy_version: 1,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
      });
      const second = await call('POST', '/v1/ai/agents', { disclosure: { text: ES }, status: 'draft' }, fresh.apiKey);
      expect(second.body.ai_agent.name).toBe('AI agent 2');

      const [v1] = await versions(fresh, agent.id);
      expect(v1).toMatchObject({ policyVersion: 1, snapshot: { policy_version: 1, disclosure: { text: EN }, handoff_rules: agent.handoff_rules, policy: agent.policy, voice: agent.voice } });
      expect((await audits(fresh, agent.id)).map((a) => a.action)).toEqual(['ai_agent.created']);
      expect(await workflowStatus(fresh, agent.id)).toBe('draft');
    });

    it('keeps the client values, canonicalizes the language and assigns rule ids', async () => {
      const agent = await create({
        voice: { language: 'es-mx', voice_id: 'lucia', pace: 0.8 },
        disclosure: { text: ES },
        policy: { max_settlement_pct: 30, prohibited: ['garantizado'] },
        handoff_rules: [
          { id: null, trigger: 'keywords', params: { keywords: ['abogado'] }, action: 'transfer', severity: 'hard' },
          { trigger: 'negative_sentiment', action: 'offer_human', severity: 'soft' },
          { trigger: 'payment_over', params: { cents: 100_000 }, action: 'confirm_human', severity: 'soft', locked: true },
        ],
      });
      expect(agent.voice).toEqual({ language: 'es-MX', voice_id: 'lucia', pace: 0.8 });
      expect(agent.policy).toEqual({ max_settlement_pct: 30, min_payment_cents: 2500, max_plan_months: 6, take_payments: 'none', prohibited: ['garantizado'] });
      expect(agent.handoff_rules).toEqual([
        { id: expect.stringMatching(UUID_RE), trigger: 'keywords', params: { keywords: ['abogado'] }, action: 'transfer', severity: 'hard', locked: false },
        { id: expect.stringMatching(UUID_RE), trigger: 'negative_sentiment', params: { threshold: -0.5, consecutive: 2 }, action: 'offer_human', severity: 'soft', locked: false },
        { id: expect.stringMatching(UUID_RE), trigger: 'payment_over', params: { cents: 100_000 }, action: 'confirm_human', severity: 'soft', locked: false },
        { id: expect.stringMatching(UUID_RE), ...HUMAN_RULE },
      ]);
    });

    it.each([
      ['an unknown key', { disclosure: { text: EN }, tenant_id: randomUUID() }, /tenant_id/],
      ['an unknown voice key', { disclosure: { text: EN }, voice: { gender: 'f' } }, /voice\.gender/],
      ['an unknown policy key', { disclosure: { text: EN }, policy: { discount: 5 } }, /policy\.discount/],
      ['an unknown disclosure key', { disclosure: { text: EN, locked: true } }, /disclosure\.locked/],
      ['an unknown rule key', { disclosure: { text: EN }, handoff_rules: [{ trigger: 'human_requested', action: 'transfer', severity: 'hard', note: 1 }] }, /note/],
      ['a name of the wrong type', { disclosure: { text: EN }, name: 5 }, /name/],
      ['a pace of the wrong type', { disclosure: { text: EN }, voice: { pace: 'fast' } }, /voice\.pace/],
      ['a disclosure text of the wrong type', { disclosure: { text: 42 } }, /disclosure\.text/],
      ['a missing disclosure', {}, /field 'disclosure' is required/],
      ['take_payments outside its vocabulary', { disclosure: { text: EN }, policy: { take_payments: 'cash' } }, /take_payments/],
      ['an unknown trigger', { disclosure: { text: EN }, handoff_rules: [{ trigger: 'silence', action: 'transfer', severity: 'hard' }] }, /trigger/],
      ['an unknown action', { disclosure: { text: EN }, handoff_rules: [{ trigger: 'keywords', params: { keywords: ['x'] }, action: 'hang_up', severity: 'hard' }] }, /action/],
      ['an unknown severity', { disclosure: { text: EN }, handoff_rules: [{ trigger: 'keywords', params: { keywords: ['x'] }, action: 'transfer', severity: 'medium' }] }, /severity/],
      ['a rule id that is not a uuid', { disclosure: { text: EN }, handoff_rules: [{ id: 'r1', trigger: 'keywords', params: { keywords: ['x'] }, action: 'transfer', severity: 'hard' }] }, /id/],
      ['handoff_rules that is not a list', { disclosure: { text: EN }, handoff_rules: {} }, /handoff_rules/],
    ])('400 bad_request for %s', async (_label, body, message) => {
      expectError(await call('POST', '/v1/ai/agents', body), 400, 'bad_request', message);
    });

    it('400 bad_request for malformed JSON, 415 for a body that is not JSON, 413 over 8 MiB', async () => {
      expectError(await app.request('POST', '/v1/ai/agents', { token: tenant.apiKey, rawBody: '{"name":', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
      expectError(await app.request('POST', '/v1/ai/agents', { token: tenant.apiKey, rawBody: 'name=x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
      const huge = JSON.stringify({ disclosure: { text: `${EN} ${'x'.repeat(8 * MiB)}` } });
      expectError(await app.request('POST', '/v1/ai/agents', { token: tenant.apiKey, rawBody: huge, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');
    });

    const rule = (trigger: string, params: unknown, extra: Record<string, unknown> = {}) => ({ trigger, params, action: 'transfer', severity: 'hard', ...extra });
    it.each([
      ['an English text that does not identify the voice as automated', { disclosure: { text: 'Hello, this is Acme Recovery calling about your account.' } }, /does not clearly identify/],
      ['a Spanish text that does not identify the voice as automated', { disclosure: { text: 'Hola, le llamamos de Acme Recovery sobre su cuenta.' } }, /does not clearly identify/],
      ['a text that denies automation', { disclosure: { text: 'This is not an automated call.' } }, /denies/],
      ['a Spanish text that denies automation', { disclosure: { text: 'Esta llamada no es automatizada.' } }, /denies/],
      ['a disclosure over 10000 bytes', { disclosure: { text: `${EN} ${'é'.repeat(5000)}` } }, /10000 bytes/],
      ['status live', { status: 'live' }, /status must be 'draft'/],
      ['status retired', { status: 'retired' }, /status must be 'draft'/],
      ['an unknown status', { status: 'bogus' }, /status must be 'draft'/],
      ['a blank name', { name: '   ' }, /blank/],
      ['a name over 200 characters', { name: 'n'.repeat(201) }, /200/],
      ['a language that is not BCP-47', { voice: { language: 'en_US' } }, /voice\.language/],
      ['an empty voice_id', { voice: { voice_id: '' } }, /voice\.voice_id/],
      ['a voice_id over 100 characters', { voice: { voice_id: 'v'.repeat(101) } }, /voice\.voice_id/],
      ['a pace above 1', { voice: { pace: 1.5 } }, /voice\.pace/],
      ['a negative pace', { voice: { pace: -0.1 } }, /voice\.pace/],
      ['max_settlement_pct above 100', { policy: { max_settlement_pct: 101 } }, /max_settlement_pct/],
      ['a fractional max_settlement_pct', { policy: { max_settlement_pct: 12.5 } }, /max_settlement_pct/],
      ['a negative min_payment_cents', { policy: { min_payment_cents: -1 } }, /min_payment_cents/],
      ['max_plan_months 0', { policy: { max_plan_months: 0 } }, /max_plan_months/],
      ['max_plan_months 61', { policy: { max_plan_months: 61 } }, /max_plan_months/],
      ['101 prohibited phrases', { policy: { prohibited: Array.from({ length: 101 }, (_, i) => `p${i}`) } }, /at most 100/],
      ['an empty prohibited phrase', { policy: { prohibited: [''] } }, /prohibited\[0\]/],
      ['a prohibited phrase over 200 characters', { policy: { prohibited: ['p'.repeat(201)] } }, /prohibited\[0\]/],
      ['keywords without keywords', { handoff_rules: [rule('keywords', { keywords: [] })] }, /keywords/],
      ['keywords params with an unknown key', { handoff_rules: [rule('keywords', { keywords: ['x'], regex: '.*' })] }, /regex/],
      ['a negative_sentiment threshold out of range', { handoff_rules: [rule('negative_sentiment', { threshold: 5 })] }, /threshold/],
      ['a negative_sentiment consecutive that is not an integer', { handoff_rules: [rule('negative_sentiment', { consecutive: 1.5 })] }, /consecutive/],
      ['payment_over without cents', { handoff_rules: [rule('payment_over', {})] }, /cents/],
      ['payment_over with zero cents', { handoff_rules: [rule('payment_over', { cents: 0 })] }, /cents/],
      ['human_requested with params', { handoff_rules: [rule('human_requested', { seconds: 10 })] }, /unknown key/],
      ['a changed human_requested rule', { handoff_rules: [rule('human_requested', {}, { action: 'offer_human' })] }, /locked/],
      ['an unlocked human_requested rule', { handoff_rules: [rule('human_requested', {}, { locked: false })] }, /locked/],
      ['a second human_requested rule', { handoff_rules: [rule('human_requested', {}), rule('human_requested', {})] }, /exactly one/],
      ['a repeated rule id', { handoff_rules: [rule('keywords', { keywords: ['a'] }, { id: '11111111-1111-4111-8111-111111111111' }), rule('keywords', { keywords: ['b'] }, { id: '11111111-1111-4111-8111-111111111111' })] }, /repeats/],
    ])('422 unprocessable for %s, and nothing is created', async (_label, body, message) => {
      const before = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.aiAgent.count());
      const sent = { disclosure: { text: EN }, ...body };
      expectError(await call('POST', '/v1/ai/agents', sent), 422, 'unprocessable', message);
      expect(await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.aiAgent.count())).toBe(before);
    });

    it('409 on a duplicate name, case-insensitively; the name is free again once its agent is retired', async () => {
      const name = uniqueAgentName();
      const first = await create({ name });
      expectError(await call('POST', '/v1/ai/agents', { name: name.toUpperCase(), disclosure: { text: EN } }), 409, 'conflict', /already exists/);
      const second = await create({ name: `${name} two` });
      expectError(await patch(second.id, { name: ` ${name.toLowerCase()} ` }), 409, 'conflict', /already exists/);
      expect((await call('DELETE', `/v1/ai/agents/${first.id}`)).status).toBe(200);
      const reused = await create({ name });
      expect(reused.name).toBe(name);
      expect((await patchOk(second.id, { name: `${name} three` })).name).toBe(`${name} three`);
    });
  });

  describe('read', () => {
    it('lists every agent oldest first, retired included, and reads one', async () => {
      const fresh = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
      const a = await create({}, fresh);
      const b = await create({}, fresh);
      expect((await call('DELETE', `/v1/ai/agents/${a.id}`, undefined, fresh.apiKey)).status).toBe(200);
      const list = await call('GET', '/v1/ai/agents', undefined, fresh.apiKey);
      expect(list.status).toBe(200);
      expect(list.body.ai_agents.map((x: { id: string; status: string }) => [x.id, x.status])).toEqual([
        [a.id, 'retired'],
        [b.id, 'draft'],
      ]);
      const one = await call('GET', `/v1/ai/agents/${b.id}`, undefined, fresh.apiKey);
      expect(one.status).toBe(200);
      expect(one.body.ai_agent).toEqual(b);
    });

    it('404 for an id of another tenant, an unknown id and a malformed id, on every id route', async () => {
      const foreign = await create({}, tenant);
      for (const id of [foreign.id, randomUUID(), 'not-a-uuid']) {
        expectError(await call('GET', `/v1/ai/agents/${id}`, undefined, other.apiKey), 404, 'not_found');
        expectError(await patch(id, { name: 'Mine now' }, other), 404, 'not_found');
        expectError(await call('DELETE', `/v1/ai/agents/${id}`, undefined, other.apiKey), 404, 'not_found');
      }
      expect((await call('GET', '/v1/ai/agents', undefined, other.apiKey)).body.ai_agents).toEqual([]);
      expect((await row(tenant, foreign.id)).name).toBe(foreign.name);
    });

    it('a ddw_ widget token is 403 on every route', async () => {
      const agent = await create();
      const { token } = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
      expectError(await call('GET', '/v1/ai/agents', undefined, token), 403, 'forbidden');
      expectError(await call('POST', '/v1/ai/agents', { disclosure: { text: EN } }, token), 403, 'forbidden');
      expectError(await call('GET', `/v1/ai/agents/${agent.id}`, undefined, token), 403, 'forbidden');
      expectError(await call('PATCH', `/v1/ai/agents/${agent.id}`, { name: 'widget' }, token), 403, 'forbidden');
      expectError(await call('DELETE', `/v1/ai/agents/${agent.id}`, undefined, token), 403, 'forbidden');
      expect((await row(tenant, agent.id)).status).toBe('draft');
    });

    it('401 without a credential', async () => {
      expectError(await app.request('GET', '/v1/ai/agents'), 401, 'unauthorized');
    });
  });

  describe('policy_version', () => {
    it('goes up by exactly 1 per versioned PATCH, not for a name-only or no-op PATCH, with a snapshot of every version', async () => {
      const agent = await create();
      const v2 = await patchOk(agent.id, { voice: { pace: 0.7 } });
      expect(v2.policy_version).toBe(2);
      expect(v2.voice).toEqual({ language: 'en-US', voice_id: 'default', pace: 0.7 });

      expect((await patchOk(agent.id, { name: uniqueAgentName() })).policy_version).toBe(2);
      expect((await patchOk(agent.id, { voice: { pace: 0.7 }, policy: { max_plan_months: 6 }, disclosure: { text: EN } })).policy_version).toBe(2);
      expect((await patchOk(agent.id, { handoff_rules: [] })).policy_version).toBe(2);
      expect((await patchOk(agent.id, {})).policy_version).toBe(2);

      const v3 = await patchOk(agent.id, {
        policy: { max_settlement_pct: 20, take_payments: 'card_on_file' },
        handoff_rules: [{ trigger: 'keywords', params: { keywords: ['lawyer'] }, action: 'transfer', severity: 'hard' }],
        disclosure: { text: ES },
      });
      expect(v3.policy_version).toBe(3);
      // Resending the rules as read (ids included) or without ids is no change.
      expect((await patchOk(agent.id, { handoff_rules: v3.handoff_rules })).policy_version).toBe(3);
      expect((await patchOk(agent.id, { handoff_rules: [{ trigger: 'keywords', params: { keywords: ['lawyer'] }, action: 'transfer', severity: 'hard' }] })).handoff_rules).toEqual(v3.handoff_rules);

      const snaps = await versions(tenant, agent.id);
      expect(snaps.map((s) => s.policyVersion)).toEqual([1, 2, 3]);
      expect(snaps[1]!.snapshot).toMatchObject({ voice: { pace: 0.7 }, disclosure: { text: EN } });
      expect(snaps[2]!.snapshot).toMatchObject({ policy: v3.policy, handoff_rules: v3.handoff_rules, disclosure: { text: ES } });
      expect(snaps.every((s) => s.actor?.startsWith('api_key:'))).toBe(true);
      expect((await audits(tenant, agent.id)).map((a) => [a.action, (a.payload as { policy_version?: number }).policy_version])).toEqual([
        ['ai_agent.created', 1],
        ['ai_agent.updated', 2],
        ['ai_agent.updated', 2],
        ['ai_agent.updated', 3],
      ]);
    });

    it('the database refuses a decrease and keeps snapshots append-only', async () => {
      const agent = await create();
      await patchOk(agent.id, { voice: { pace: 0.9 } });
      await expect(withTenantSql(app.deps.db, tenant.tenantId, (sql) => sql.query('UPDATE ai_agents SET policy_version = 1 WHERE id = $1', [agent.id]))).rejects.toThrow(/cannot decrease/);
      await expect(withTenantSql(app.deps.db, tenant.tenantId, (sql) => sql.query('DELETE FROM ai_agent_versions WHERE ai_agent_id = $1', [agent.id]))).rejects.toThrow();
      expect((await row(tenant, agent.id)).policyVersion).toBe(2);
    });
  });

  describe('the human_requested rule', () => {
    it('is always present and locked: an empty list keeps it, its id never changes, and it cannot be changed or doubled', async () => {
      const agent = await create({ handoff_rules: [{ trigger: 'payment_over', params: { cents: 5000 }, action: 'offer_human', severity: 'soft' }] });
      const human = agent.handoff_rules.find((r: { trigger: string }) => r.trigger === 'human_requested');
      expect(human).toEqual({ id: expect.stringMatching(UUID_RE), ...HUMAN_RULE });

      const cleared = await patchOk(agent.id, { handoff_rules: [] });
      expect(cleared.handoff_rules).toEqual([human]);
      const reordered = await patchOk(agent.id, { handoff_rules: [{ ...HUMAN_RULE, id: null }, { trigger: 'keywords', params: { keywords: ['supervisor'] }, action: 'transfer', severity: 'hard' }] });
      expect(reordered.handoff_rules[0]).toEqual(human);

      expectError(await patch(agent.id, { handoff_rules: [{ ...HUMAN_RULE, severity: 'soft' }] }), 422, 'unprocessable', /locked/);
      expectError(await patch(agent.id, { handoff_rules: [{ ...HUMAN_RULE, locked: false }] }), 422, 'unprocessable', /locked/);
      expectError(await patch(agent.id, { handoff_rules: [HUMAN_RULE, { ...HUMAN_RULE, id: null }] }), 422, 'unprocessable', /exactly one/);
      expect((await row(tenant, agent.id)).handoffRules).toEqual(reordered.handoff_rules);
    });
  });

  describe('PATCH validation', () => {
    it('400 for unknown keys and wrong types, 422 for domain rules, nothing written', async () => {
      const agent = await create();
      expectError(await patch(agent.id, { policy_version: 9 }), 400, 'bad_request', /policy_version/);
      expectError(await patch(agent.id, { voice: { accent: 'x' } }), 400, 'bad_request', /voice\.accent/);
      expectError(await patch(agent.id, { status: 'archived' }), 400, 'bad_request', /status/);
      expectError(await patch(agent.id, { voice: { language: 'xx_YY!' } }), 422, 'unprocessable', /voice\.language/);
      expectError(await patch(agent.id, { policy: { max_plan_months: 100 } }), 422, 'unprocessable', /max_plan_months/);
      expectError(await patch(agent.id, { disclosure: { text: 'Hello from Acme.' } }), 422, 'unprocessable', /does not clearly identify/);
      expectError(await patch(agent.id, { name: '' }), 422, 'unprocessable', /blank/);
      const now = await call('GET', `/v1/ai/agents/${agent.id}`);
      expect(now.body.ai_agent).toEqual(agent);
    });
  });

  describe('lifecycle', () => {
    it('draft → live locks the disclosure for good, live → paused → live; the workflow state matches the row after every move', async () => {
      const agent = await create();
      expect(await workflowStatus(tenant, agent.id)).toBe('draft');
      const live = await patchOk(agent.id, { status: 'live' });
      expect(live).toMatchObject({ status: 'live', disclosure: { text: EN, mandated: true, locked: true }, policy_version: 1 });
      const liveRow = await row(tenant, agent.id);
      expect(liveRow.firstLiveAt).toBeInstanceOf(Date);
      expect(await workflowStatus(tenant, agent.id)).toBe('live');

      expectError(await patch(agent.id, { disclosure: { text: ES } }), 409, 'conflict', /locked/);
      const paused = await patchOk(agent.id, { status: 'paused' });
      expect(paused).toMatchObject({ status: 'paused', disclosure: { locked: true } });
      expect(await workflowStatus(tenant, agent.id)).toBe('paused');
      // Still locked after a pause; the same text again is no change.
      expectError(await patch(agent.id, { disclosure: { text: ES }, voice: { pace: 0.1 } }), 409, 'conflict', /locked/);
      expect((await patchOk(agent.id, { disclosure: { text: EN } })).policy_version).toBe(1);
      // Other versioned fields still change while paused or live.
      expect((await patchOk(agent.id, { voice: { pace: 0.6 } })).policy_version).toBe(2);

      const again = await patchOk(agent.id, { status: 'live' });
      expect(again.status).toBe('live');
      expect((await row(tenant, agent.id)).firstLiveAt).toEqual(liveRow.firstLiveAt);
      expect(await workflowStatus(tenant, agent.id)).toBe('live');
      // The same status is no move.
      expect((await patchOk(agent.id, { status: 'live' })).status).toBe('live');

      // The database refuses the change and the unlock whatever the application does.
      await expect(
        withTenantSql(app.deps.db, tenant.tenantId, (sql) => sql.query('UPDATE ai_agents SET disclosure_text = $2 WHERE id = $1', [agent.id, ES])),
      ).rejects.toThrow(/is locked/);
      await expect(
        withTenantSql(app.deps.db, tenant.tenantId, (sql) => sql.query('UPDATE ai_agents SET disclosure_locked = false WHERE id = $1', [agent.id])),
      ).rejects.toThrow(/cannot be released/);
      expect((await row(tenant, agent.id)).disclosureText).toBe(EN);

      expect((await audits(tenant, agent.id)).map((a) => [a.action, (a.payload as { from?: string }).from ?? null])).toEqual([
        ['ai_agent.created', null],
        ['ai_agent.live', 'draft'],
        ['ai_agent.paused', 'live'],
        ['ai_agent.updated', null],
        ['ai_agent.live', 'paused'],
      ]);
    });

    it('409 for moves the lifecycle does not allow, writing nothing', async () => {
      const agent = await create();
      expectError(await patch(agent.id, { status: 'paused' }), 409, 'conflict', /draft to paused/);
      expectError(await patch(agent.id, { status: 'retired' }), 409, 'conflict', /DELETE/);
      expectError(await patch(agent.id, { status: 'paused', voice: { pace: 0.2 } }), 409, 'conflict');
      expect((await row(tenant, agent.id)).policyVersion).toBe(1);
      await patchOk(agent.id, { status: 'live' });
      expectError(await patch(agent.id, { status: 'draft' }), 409, 'conflict', /live to draft/);
      await patchOk(agent.id, { status: 'paused' });
      expectError(await patch(agent.id, { status: 'draft' }), 409, 'conflict', /paused to draft/);
      expect(await workflowStatus(tenant, agent.id)).toBe('paused');
      expect((await row(tenant, agent.id)).status).toBe('paused');
    });

    it("going live needs the tenant's voice_ai_enabled: 409 while it is off, and the agent stays a draft", async () => {
      const off = await provisionTenant(app, { tier: 'growth' });
      const agent = await create({}, off);
      expectError(await patch(agent.id, { status: 'live', voice: { pace: 0.3 } }, off), 409, 'conflict', /voice_ai_enabled/);
      expect(await row(off, agent.id)).toMatchObject({ status: 'draft', disclosureLocked: false, policyVersion: 1 });
      expect(await workflowStatus(off, agent.id)).toBe('draft');

      const enabled = await app.request('PATCH', `/v1/admin/tenants/${off.tenantId}`, { token: ADMIN_TOKEN, body: { voice_ai_enabled: true } });
      expect(enabled.status).toBe(200);
      expect((await patch(agent.id, { status: 'live' }, off)).body.ai_agent).toMatchObject({ status: 'live', disclosure: { locked: true } });
    });

    it('concurrent moves: one wins, the other is 409 or finds it done; the move is written once', async () => {
      const agent = await create();
      const results = await Promise.all([patch(agent.id, { status: 'live' }), patch(agent.id, { status: 'live' })]);
      expect(results.map((r) => r.status).sort()).toEqual(expect.arrayContaining([200]));
      for (const r of results) expect([200, 409]).toContain(r.status);
      expect((await row(tenant, agent.id)).status).toBe('live');
      expect((await audits(tenant, agent.id)).filter((a) => a.action === 'ai_agent.live')).toHaveLength(1);
      expect(await workflowStatus(tenant, agent.id)).toBe('live');
    });

    it('a missing workflow is started by the next move from the row state', async () => {
      const agent = await create();
      await patchOk(agent.id, { status: 'live' });
      const handle = app.deps.temporal!.workflow.getHandle(aiAgentLifecycleWorkflowId(tenant.tenantId, agent.id));
      await handle.terminate('test: the workflow is gone');
      const paused = await patchOk(agent.id, { status: 'paused' });
      expect(paused.status).toBe('paused');
      expect(await workflowStatus(tenant, agent.id)).toBe('paused');
    });

    it('continues as new after its transitions per run, carrying the status over', async () => {
      const agent = await create();
      const workflowId = aiAgentLifecycleWorkflowId(tenant.tenantId, agent.id);
      const handle = app.deps.temporal!.workflow.getHandle(workflowId);
      await handle.terminate('test: restart with a short run');
      await app.deps.temporal!.workflow.start(aiAgentLifecycleWorkflow, {
        taskQueue,
        workflowId,
        args: [{ tenantId: tenant.tenantId, agentId: agent.id, status: 'draft', transitionsPerRun: 2 }],
      });
      const firstRun = (await handle.describe()).runId;
      await patchOk(agent.id, { status: 'live' });
      await patchOk(agent.id, { status: 'paused' });
      const secondRun = await waitFor(async () => {
        const { runId } = await handle.describe();
        return runId !== firstRun ? runId : undefined;
      });
      expect(await workflowStatus(tenant, agent.id)).toBe('paused');
      await patchOk(agent.id, { status: 'live' });
      expect((await handle.describe()).runId).toBe(secondRun);
      expect(await workflowStatus(tenant, agent.id)).toBe('live');
      expect((await row(tenant, agent.id)).status).toBe('live');
    });
  });

  describe('retire', () => {
    it('DELETE retires through the workflow, which then completes; idempotent; a retired agent refuses every PATCH', async () => {
      const agent = await create();
      await patchOk(agent.id, { status: 'live' });
      const retired = await call('DELETE', `/v1/ai/agents/${agent.id}`);
      expect(retired.status).toBe(200);
      expect(retired.body.ai_agent).toMatchObject({ id: agent.id, status: 'retired', disclosure: { locked: true } });
      const handle = app.deps.temporal!.workflow.getHandle(aiAgentLifecycleWorkflowId(tenant.tenantId, agent.id));
      await handle.result();
      expect(await handle.query(aiAgentStatusQuery)).toBe('retired');
      expect((await row(tenant, agent.id)).retiredAt).toBeInstanceOf(Date);

      const again = await call('DELETE', `/v1/ai/agents/${agent.id}`);
      expect(again.status).toBe(200);
      expect(again.body.ai_agent).toEqual(retired.body.ai_agent);
      expect((await audits(tenant, agent.id)).filter((a) => a.action === 'ai_agent.retired')).toHaveLength(1);

      for (const body of [{ name: 'Back' }, { status: 'live' }, { voice: { pace: 0.1 } }, {}]) {
        expectError(await patch(agent.id, body), 409, 'conflict', /retired/);
      }
      expect((await call('GET', `/v1/ai/agents/${agent.id}`)).body.ai_agent.status).toBe('retired');
    });

    it('a draft and a paused agent retire too', async () => {
      const draft = await create();
      expect((await call('DELETE', `/v1/ai/agents/${draft.id}`)).body.ai_agent.status).toBe('retired');
      const paused = await create();
      await patchOk(paused.id, { status: 'live' });
      await patchOk(paused.id, { status: 'paused' });
      expect((await call('DELETE', `/v1/ai/agents/${paused.id}`)).body.ai_agent.status).toBe('retired');
      await waitFor(async () => ((await row(tenant, paused.id)).status === 'retired' ? true : undefined));
    });
  });

  describe('without a workflow service', () => {
    let bare: TestApp;
    beforeAll(async () => {
      bare = await startTestApp({ TEMPORAL_ADDRESS: undefined });
    });
    afterAll(async () => {
      await bare?.close();
    });

    it('creates and edits agents, but a status move or a retire is 500 internal and writes nothing', async () => {
      const created = await bare.request('POST', '/v1/ai/agents', { token: tenant.apiKey, body: { name: uniqueAgentName(), disclosure: { text: EN } } });
      expect(created.status).toBe(201);
      const id = created.body.ai_agent.id;
      const edited = await bare.request('PATCH', `/v1/ai/agents/${id}`, { token: tenant.apiKey, body: { voice: { pace: 0.2 } } });
      expect(edited.body.ai_agent.policy_version).toBe(2);
      expectError(await bare.request('PATCH', `/v1/ai/agents/${id}`, { token: tenant.apiKey, body: { status: 'live', voice: { pace: 0.3 } } }), 500, 'internal', /workflow service/);
      expectError(await bare.request('DELETE', `/v1/ai/agents/${id}`, { token: tenant.apiKey }), 500, 'internal', /workflow service/);
      expect(await row(tenant, id)).toMatchObject({ status: 'draft', policyVersion: 2 });
      // The API with a workflow service starts the missing workflow on the next move.
      expect((await patchOk(id, { status: 'live' })).status).toBe('live');
    });
  });
});
