import { randomUUID } from 'node:crypto';
import type { QueryResultRow } from 'pg';
import { withTenant, withTenantSql } from '../../src/lib/tenancy';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';

jest.setTimeout(60_000);

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const EN = 'This is an automated call from Acme Recovery.';
const SUMMARY_FIELDS = ['id', 'kind', 'ai_agent_id', 'policy_version', 'status', 'outcome', 'call_id', 'campaign_id', 'debt_id', 'turns', 'taken_over_at', 'started_at', 'ended_at'];

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

describe('AI conversations', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;
  let other: ProvisionedTenant;

  const call = (method: string, path: string, body?: unknown, token = tenant.apiKey) => app.request(method, path, { token, body });
  const sql = <T extends QueryResultRow>(t: ProvisionedTenant, text: string, params: unknown[] = []) => withTenantSql(app.deps.db, t.tenantId, (s) => s.query<T>(text, params));
  const createAgent = async (t: ProvisionedTenant = tenant, body: Record<string, unknown> = {}) => {
    const res = await call('POST', '/v1/ai/agents', { name: `Agent ${randomUUID().slice(0, 8)}`, disclosure: { text: EN }, ...body }, t.apiKey);
    expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
    return res.body.ai_agent as { id: string; policy_version: number };
  };
  const setAgentStatus = (t: ProvisionedTenant, id: string, status: string) =>
    sql(t, `UPDATE ai_agents SET status = $2, disclosure_locked = disclosure_locked OR $2 = 'live' WHERE id = $1`, [id, status]);
  const sandbox = (agentId: string, body: Record<string, unknown>, t: ProvisionedTenant = tenant) => call('POST', `/v1/ai/agents/${agentId}/test`, body, t.apiKey);
  const sandboxOk = async (agentId: string, body: Record<string, unknown>) => {
    const res = await sandbox(agentId, body);
    expect({ status: res.status, body: res.status === 200 ? null : res.body }).toEqual({ status: 200, body: null });
    return res.body;
  };
  const insertCall = (t: ProvisionedTenant, agentId: string, f: { status?: string; outcome?: string | null; startedAt?: string; takenOver?: boolean; campaignId?: string | null }) =>
    sql<{ id: string }>(
      t,
      `INSERT INTO ai_conversations (tenant_id, ai_agent_id, policy_version, kind, call_uuid, campaign_id, status, outcome, started_at, taken_over_at, taken_over_by)
       VALUES (app_tenant_id(), $1, 1, 'call', $2, $3, $4, $5, coalesce($6::timestamptz, now()), CASE WHEN $7 THEN now() END, CASE WHEN $7 THEN 'user:x' END)
       RETURNING id`,
      [agentId, randomUUID(), f.campaignId ?? null, f.status ?? 'ended', f.outcome ?? null, f.startedAt ?? null, f.takenOver ?? false],
    ).then((r) => r[0]!.id);
  const insertUsage = (t: ProvisionedTenant, f: { seconds: number; cost: string; answeredAt?: string }) =>
    sql(
      t,
      `INSERT INTO ai_usage (tenant_id, call_uuid, answered_at, ended_at, billable_seconds, minute_rate_usd, cost_usd)
       VALUES (app_tenant_id(), $1, coalesce($2::timestamptz, now()), coalesce($2::timestamptz, now()), $3, 0.1000, $4::numeric)`,
      [randomUUID(), f.answeredAt ?? null, f.seconds, f.cost],
    );

  beforeAll(async () => {
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: `ai-conversations-${randomUUID()}` });
    tenant = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
    other = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
  });
  afterAll(async () => {
    await app?.close();
  });

  describe('POST /v1/ai/agents/{id}/test', () => {
    it('says the disclosure first, then runs to a promise inside policy, and stores an ended sandbox row', async () => {
      const agent = await createAgent(tenant, { policy: { max_settlement_pct: 20, min_payment_cents: 5000 } });
      const body = await sandboxOk(agent.id, { turns: ['yes, speaking', '1234', 'yes', 'ignored after the end'], consult_config: { factor: 'ssn_last4' } });
      const c = body.conversation;
      expect(c).toMatchObject({ kind: 'sandbox', status: 'ended', outcome: 'promise_to_pay', ai_agent_id: agent.id, policy_version: 1, call_id: null, campaign_id: null, debt_id: null });
      expect(c.transcript[0]).toEqual({ speaker: 'agent', text: EN, at_seconds: 0 });
      expect(c.events[0]).toEqual({ type: 'disclosure_given', at_seconds: 0 });
      expect(c.transcript.filter((t: { speaker: string }) => t.speaker === 'consumer')).toEqual([
        { speaker: 'consumer', text: 'yes, speaking', at_seconds: 10 },
        { speaker: 'consumer', text: '1234', at_seconds: 20 },
        { speaker: 'consumer', text: 'yes', at_seconds: 30 },
      ]);
      expect(c.transcript.at(-1)).toMatchObject({ speaker: 'agent', at_seconds: 30 });
      const promise = c.events.find((e: { type: string }) => e.type === 'promise');
      expect(promise.amount_cents).toBeGreaterThanOrEqual(80000);
      expect(promise.amount_cents).toBeLessThanOrEqual(100000);
      expect(c.events.at(-1)).toEqual({ type: 'end', outcome: 'promise_to_pay', reason: 'promise', at_seconds: 30 });
      expect(body.sandbox).toEqual({
        language: 'en',
        max_call_seconds: 900,
        turns_sent: 4,
        turns_used: 3,
        artificial_voice_disclosure: { configured: false, valid: false },
      });
      const [row] = await sql<{ kind: string; status: string; engine_state: unknown; ended_at: Date | null }>(tenant, 'SELECT kind, status, engine_state, ended_at FROM ai_conversations WHERE id = $1', [c.id]);
      expect(row).toEqual({ kind: 'sandbox', status: 'ended', engine_state: null, ended_at: expect.any(Date) });
    });

    it('without a consult_config ({}) a yes to the name hears nothing of the debt', async () => {
      const agent = await createAgent();
      const { conversation } = await sandboxOk(agent.id, { turns: ['yes', 'how much do I owe?', 'no'] });
      expect(conversation.events.at(-1)).toMatchObject({ type: 'end', outcome: 'completed', reason: 'identity_only' });
      expect(conversation.events.map((e: { type: string }) => e.type)).not.toContain('offer');
      for (const line of conversation.transcript.filter((l: { speaker: string }) => l.speaker === 'agent')) {
        expect(line.text).not.toMatch(/Sample Creditor|1,000\.00|6789|collect a debt/);
      }
    });

    it('hands off when the consumer asks for a person', async () => {
      const agent = await createAgent();
      const { conversation } = await sandboxOk(agent.id, { turns: ['yes', 'I want to speak to a person'], elapsed_seconds_per_turn: 30 });
      expect(conversation.outcome).toBe('handoff');
      expect(conversation.events.find((e: { type: string }) => e.type === 'handoff')).toMatchObject({ trigger: 'human_requested', action: 'transfer', at_seconds: 60 });
    });

    it('fails verification after max_attempts wrong answers, with the synthetic debt facts', async () => {
      const agent = await createAgent();
      const { conversation } = await sandboxOk(agent.id, {
        turns: ['yes', '1111', '2222'],
        consult_config: { factor: 'ssn_last4', max_attempts: 2 },
        debt: { ssn_last4: '4321' },
      });
      expect(conversation.outcome).toBe('verification_failed');
      expect(conversation.events.filter((e: { type: string }) => e.type === 'verification_attempt')).toHaveLength(2);
      expect(conversation.transcript.map((t: { text: string }) => t.text).join(' ')).not.toMatch(/Sample Creditor|1,000\.00/);
    });

    it('verifies against the synthetic debt and speaks Spanish when asked', async () => {
      const agent = await createAgent(tenant, { disclosure: { text: 'Esta es una llamada automatizada de Acme Recovery.' } });
      const res = await sandboxOk(agent.id, { turns: ['sí', '4321'], consult_config: { factor: 'ssn_last4' }, debt: { ssn_last4: '4321' }, language: 'es' });
      expect(res.sandbox.language).toBe('es');
      expect(res.conversation.events.map((e: { type: string }) => e.type)).toContain('verified');
    });

    it('masks digit runs of 7 or more in consumer words at write time, and runs a script that ends early with a null outcome', async () => {
      const agent = await createAgent();
      const { conversation } = await sandboxOk(agent.id, { turns: ['call me at 555-123-4567 or 5551234567, pin 2468'] });
      expect(conversation.outcome).toBeNull();
      expect(conversation.transcript.filter((t: { speaker: string }) => t.speaker === 'consumer')).toEqual([
        { speaker: 'consumer', text: 'call me at ***-***-4567 or ******4567, pin 2468', at_seconds: 10 },
      ]);
      const [row] = await sql<{ transcript: string }>(tenant, 'SELECT transcript::text FROM ai_conversations WHERE id = $1', [conversation.id]);
      expect(row!.transcript).not.toMatch(/555/);
    });

    it('runs against the current policy version, never meters or writes a CDR row, and audits without the transcript', async () => {
      const fresh = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
      const agent = await createAgent(fresh);
      expect((await call('PATCH', `/v1/ai/agents/${agent.id}`, { policy: { min_payment_cents: 3000 } }, fresh.apiKey)).status).toBe(200);
      const res = await sandbox(agent.id, { turns: ['yes', 'my number is 2125550123'] }, fresh);
      expect(res.status).toBe(200);
      expect(res.body.conversation.policy_version).toBe(2);
      const counts = await sql<{ usage: number; cdr: number }>(fresh, 'SELECT (SELECT count(*)::int FROM ai_usage) AS usage, (SELECT count(*)::int FROM call_attempts) AS cdr');
      expect(counts).toEqual([{ usage: 0, cdr: 0 }]);
      const audits = await withTenant(app.deps.db, fresh.tenantId, (tx) => tx.auditLog.findMany({ where: { action: 'ai_agent.sandbox_run' } }));
      expect(audits).toHaveLength(1);
      expect(audits[0]).toMatchObject({ subjectType: 'ai_agent', subjectId: agent.id });
      expect(audits[0]!.payload).toEqual({ conversation_id: res.body.conversation.id, policy_version: 2, outcome: null, turns_used: 2 });
      expect(JSON.stringify(audits[0]!.payload)).not.toMatch(/2125550123|0123|number/);
    });

    it('works for a live agent and shows a configured tenant disclosure; a retired agent is 409', async () => {
      const fresh = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
      expect((await call('PUT', '/v1/artificial-voice-disclosure', { text: EN }, fresh.apiKey)).status).toBe(200);
      const agent = await createAgent(fresh);
      await setAgentStatus(fresh, agent.id, 'live');
      const res = await sandbox(agent.id, { turns: ['yes'] }, fresh);
      expect(res.status).toBe(200);
      expect(res.body.sandbox.artificial_voice_disclosure).toEqual({ configured: true, valid: true });
      await setAgentStatus(fresh, agent.id, 'retired');
      expectError(await sandbox(agent.id, { turns: ['yes'] }, fresh), 409, 'conflict', /retired/);
    });

    it('400 for malformed JSON, 415 for a body that is not JSON, 413 over 8 MiB', async () => {
      const agent = await createAgent();
      const path = `/v1/ai/agents/${agent.id}/test`;
      const raw = (rawBody: string, type: string) => app.request('POST', path, { token: tenant.apiKey, rawBody, headers: { 'content-type': type } });
      expectError(await raw('{"turns": [', 'application/json'), 400, 'bad_request');
      expectError(await raw('turns=yes', 'text/plain'), 415, 'unsupported_media_type');
      expectError(await raw(JSON.stringify({ turns: ['x'.repeat(8 * 1024 * 1024)] }), 'application/json'), 413, 'payload_too_large');
    });

    it("keeps to the tenant's own ai_max_call_seconds on the sandbox clock", async () => {
      const fresh = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
      expect((await app.request('PATCH', `/v1/admin/tenants/${fresh.tenantId}`, { token: ADMIN_TOKEN, body: { ai_max_call_seconds: 60 } })).status).toBe(200);
      const agent = await createAgent(fresh);
      const res = await sandbox(agent.id, { turns: ['hmm', 'hmm', 'hmm'], elapsed_seconds_per_turn: 60 }, fresh);
      expect(res.body.sandbox).toMatchObject({ max_call_seconds: 60, turns_used: 1 });
      expect(res.body.conversation.outcome).toBe('max_duration');
    });

    it('is 404 for an unknown, foreign or non-UUID agent', async () => {
      const foreign = await createAgent(other);
      expectError(await sandbox(foreign.id, { turns: ['yes'] }), 404, 'not_found');
      expectError(await sandbox(randomUUID(), { turns: ['yes'] }), 404, 'not_found');
      expectError(await sandbox('nope', { turns: ['yes'] }), 404, 'not_found');
    });

    it('is 400 for a malformed body and 422 for a refused consult_config or impossible debt facts', async () => {
      const agent = await createAgent();
      for (const body of [
        {},
        { turns: [] },
        { turns: Array.from({ length: 51 }, () => 'yes') },
        { turns: ['x'.repeat(1001)] },
        { turns: ['yes'], language: 'fr' },
        { turns: ['yes'], elapsed_seconds_per_turn: 0 },
        { turns: ['yes'], debt: { balance_cents: 'a lot' } },
        { turns: ['yes'], debt: { phone: '+12125550123' } },
        { turns: ['yes'], extra: true },
      ]) {
        expectError(await sandbox(agent.id, body), 400, 'bad_request');
      }
      expectError(await sandbox(agent.id, { turns: ['yes'], consult_config: { factor: 'mothers_maiden_name' } }), 422, 'unprocessable');
      expectError(await sandbox(agent.id, { turns: ['yes'], debt: { ssn_last4: '12' } }), 422, 'unprocessable', /ssn_last4/);
      expectError(await sandbox(agent.id, { turns: ['yes'], debt: { dob: '1980-02-30' } }), 422, 'unprocessable', /dob/);
      expectError(await sandbox(agent.id, { turns: ['yes'], debt: { currency: 'usd' } }), 422, 'unprocessable', /currency/);
    });
  });

  describe('reads', () => {
    let fresh: ProvisionedTenant;
    let agentA: string;
    let agentB: string;
    let campaignId: string;
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      fresh = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
      agentA = (await createAgent(fresh)).id;
      agentB = (await createAgent(fresh)).id;
      const [campaign] = await sql<{ id: string }>(fresh, `INSERT INTO campaigns (tenant_id, name, campaign_type, ai_agent_id) VALUES (app_tenant_id(), 'AI reads', 'ai_voice', $1) RETURNING id`, [agentA]);
      campaignId = campaign!.id;
      ids.oldCall = await insertCall(fresh, agentA, { outcome: 'handoff', startedAt: '2026-01-01T00:00:00Z', campaignId, takenOver: true });
      ids.activeCall = await insertCall(fresh, agentA, { status: 'active', startedAt: '2026-01-02T00:00:00Z', campaignId });
      const res = await sandbox(agentB, { turns: ['yes', '1234', 'yes'], consult_config: { factor: 'ssn_last4' } }, fresh);
      ids.sandbox = res.body.conversation.id;
    });

    it('lists summaries newest first, with filters', async () => {
      const list = async (q: string) => {
        const res = await call('GET', `/v1/ai/conversations${q}`, undefined, fresh.apiKey);
        expect(res.status).toBe(200);
        return res.body;
      };
      const all = await list('');
      expect(all.conversations.map((c: { id: string }) => c.id)).toEqual([ids.sandbox, ids.activeCall, ids.oldCall]);
      expect(Object.keys(all.conversations[0])).toEqual(SUMMARY_FIELDS);
      expect(all.conversations[0]).toMatchObject({ kind: 'sandbox', turns: 13 });
      expect(all.next_cursor).toBeNull();
      const ofIds = (b: { conversations: { id: string }[] }) => b.conversations.map((c) => c.id);
      expect(ofIds(await list(`?ai_agent_id=${agentB}`))).toEqual([ids.sandbox]);
      expect(ofIds(await list(`?campaign_id=${campaignId}`))).toEqual([ids.activeCall, ids.oldCall]);
      expect(ofIds(await list('?kind=call'))).toEqual([ids.activeCall, ids.oldCall]);
      expect(ofIds(await list('?status=active'))).toEqual([ids.activeCall]);
      expect(ofIds(await list('?outcome=handoff'))).toEqual([ids.oldCall]);
      expect(ofIds(await list('?from=2026-01-01T12:00:00Z&to=2026-01-03T00:00:00Z'))).toEqual([ids.activeCall]);
      expect(ofIds(await list('?to=2026-01-02T00:00:00Z'))).toEqual([ids.oldCall]);
    });

    it('pages with a cursor', async () => {
      const first = await call('GET', '/v1/ai/conversations?limit=2', undefined, fresh.apiKey);
      expect(first.body.conversations.map((c: { id: string }) => c.id)).toEqual([ids.sandbox, ids.activeCall]);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await call('GET', `/v1/ai/conversations?limit=2&cursor=${first.body.next_cursor}`, undefined, fresh.apiKey);
      expect(second.body).toEqual({ conversations: [expect.objectContaining({ id: ids.oldCall })], next_cursor: null });
    });

    it('is 400 for a bad filter, limit or cursor', async () => {
      for (const q of ['?kind=voice', '?status=done', '?outcome=won', '?ai_agent_id=x', '?from=yesterday', '?limit=0', '?limit=1001', '?cursor=%%%']) {
        expectError(await call('GET', `/v1/ai/conversations${q}`, undefined, fresh.apiKey), 400, 'bad_request');
      }
    });

    it('is 422 for from after to (a rule across two parameters)', async () => {
      expectError(await call('GET', '/v1/ai/conversations?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', undefined, fresh.apiKey), 422, 'unprocessable');
    });

    it('never lists another tenant\'s conversations', async () => {
      const res = await call('GET', '/v1/ai/conversations', undefined, other.apiKey);
      expect(res.body.conversations.map((c: { id: string }) => c.id)).not.toEqual(expect.arrayContaining([ids.sandbox]));
    });

    it('shows one conversation with its transcript and events; foreign, unknown and non-UUID ids are 404', async () => {
      const res = await call('GET', `/v1/ai/conversations/${ids.oldCall}`, undefined, fresh.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.conversation).toMatchObject({
        id: ids.oldCall,
        kind: 'call',
        outcome: 'handoff',
        call_id: expect.stringMatching(UUID_RE),
        campaign_id: campaignId,
        taken_over_by: 'user:x',
        taken_over_at: expect.any(String),
        transcript: [],
        events: [],
      });
      expect(res.body.conversation).not.toHaveProperty('engine_state');
      const sb = await call('GET', `/v1/ai/conversations/${ids.sandbox}`, undefined, fresh.apiKey);
      expect(sb.body.conversation.transcript).toHaveLength(13);
      expectError(await call('GET', `/v1/ai/conversations/${ids.sandbox}`, undefined, other.apiKey), 404, 'not_found');
      expectError(await call('GET', `/v1/ai/conversations/${randomUUID()}`, undefined, fresh.apiKey), 404, 'not_found');
      expectError(await call('GET', '/v1/ai/conversations/not-a-uuid', undefined, fresh.apiKey), 404, 'not_found');
    });
  });

  describe('GET /v1/ai/status', () => {
    it('reports the kill switch, live agents and calls in progress', async () => {
      const fresh = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
      const live = await createAgent(fresh);
      await createAgent(fresh);
      await setAgentStatus(fresh, live.id, 'live');
      await insertCall(fresh, live.id, { status: 'active' });
      await insertCall(fresh, live.id, { status: 'ended', outcome: 'completed' });
      await sandbox(live.id, { turns: ['yes'] }, fresh);
      const before = await call('GET', '/v1/ai/status', undefined, fresh.apiKey);
      expect(before.status).toBe(200);
      expect(before.body).toEqual({ paused: false, paused_at: null, reason: null, voice_ai_enabled: true, live_agents: 1, active_conversations: 1 });
      await sql(fresh, `UPDATE tenants SET ai_paused_at = '2026-03-01T10:00:00Z', ai_paused_reason = 'incident review' WHERE id = app_tenant_id()`);
      const after = await call('GET', '/v1/ai/status', undefined, fresh.apiKey);
      expect(after.body).toMatchObject({ paused: true, paused_at: '2026-03-01T10:00:00.000Z', reason: 'incident review' });
    });
  });

  describe('GET /v1/ai/metrics/today', () => {
    it('counts today\'s calls, outcomes, handoffs, promises, sandbox runs and metering exactly', async () => {
      const fresh = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
      const empty = await call('GET', '/v1/ai/metrics/today', undefined, fresh.apiKey);
      const today = new Date().toISOString().slice(0, 10);
      expect(empty.body).toEqual({
        date: today,
        conversations: 0,
        sandbox_runs: 0,
        outcomes: {},
        handoffs: 0,
        handoff_rate: null,
        promises: 0,
        answered_ai_calls: 0,
        billable_seconds: 0,
        estimated_cost_usd: '0.0000',
      });
      const agent = (await createAgent(fresh)).id;
      await insertCall(fresh, agent, { outcome: 'promise_to_pay' });
      await insertCall(fresh, agent, { outcome: 'promise_to_pay' });
      await insertCall(fresh, agent, { outcome: 'handoff' });
      await insertCall(fresh, agent, { status: 'taken_over', takenOver: true });
      await insertCall(fresh, agent, { outcome: 'refused_to_pay' });
      await insertCall(fresh, agent, { status: 'active' });
      await insertCall(fresh, agent, { outcome: 'handoff', startedAt: '2020-01-01T00:00:00Z' });
      await sandbox(agent, { turns: ['yes'] }, fresh);
      await insertUsage(fresh, { seconds: 61, cost: '0.2000' });
      await insertUsage(fresh, { seconds: 30, cost: '0.1000' });
      await insertUsage(fresh, { seconds: 500, cost: '9.0000', answeredAt: '2020-01-01T00:00:00Z' });
      const res = await call('GET', '/v1/ai/metrics/today', undefined, fresh.apiKey);
      expect(res.body).toEqual({
        date: today,
        conversations: 6,
        sandbox_runs: 1,
        outcomes: { promise_to_pay: 2, handoff: 1, refused_to_pay: 1 },
        handoffs: 2,
        handoff_rate: '0.3333',
        promises: 2,
        answered_ai_calls: 2,
        billable_seconds: 91,
        estimated_cost_usd: '0.3000',
      });
    });
  });

  describe('GET /v1/ai/eligibility', () => {
    const eligibility = async (t: ProvisionedTenant, q = '') => {
      const res = await call('GET', `/v1/ai/eligibility${q}`, undefined, t.apiKey);
      expect({ status: res.status, body: res.status === 200 ? null : res.body }).toEqual({ status: 200, body: null });
      return res.body;
    };
    const campaign = async (t: ProvisionedTenant, f: { name: string; type?: string; aiVoice?: boolean; agentId?: string | null }) =>
      (await sql<{ id: string }>(t, `INSERT INTO campaigns (tenant_id, name, campaign_type, ai_voice, ai_agent_id) VALUES (app_tenant_id(), $1, $2, $3, $4) RETURNING id`, [
        f.name,
        f.type ?? 'ai_voice',
        f.aiVoice ?? false,
        f.agentId ?? null,
      ]))[0]!.id;
    const lead = async (t: ProvisionedTenant, campaignId: string, consent: 'none' | 'granted' | 'revoked', state = 'open') => {
      const [debt] = await sql<{ id: string }>(t, `INSERT INTO debts (tenant_id, campaign_id, external_ref, consumer_ref, amount_cents, state) VALUES (app_tenant_id(), $1, $2, $2, 1000, $3) RETURNING id`, [
        campaignId,
        randomUUID(),
        state,
      ]);
      const phone = `+1212555${String(Math.floor(Math.random() * 10000)).padStart(4, '0')}`;
      await sql(t, `INSERT INTO debt_contacts (tenant_id, debt_id, phone_e164, is_primary) VALUES (app_tenant_id(), $1, $2, true)`, [debt!.id, phone]);
      if (consent !== 'none') {
        await sql(t, `INSERT INTO consents (tenant_id, debt_id, phone_e164, channel, source, revoked_at) VALUES (app_tenant_id(), $1, $2, 'voice', 'import', $3)`, [
          debt!.id,
          phone,
          consent === 'revoked' ? new Date() : null,
        ]);
      }
    };

    it('is eligible with a live agent, a valid disclosure and consented leads; reports the consent share', async () => {
      const t = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
      expect((await call('PUT', '/v1/artificial-voice-disclosure', { text: EN }, t.apiKey)).status).toBe(200);
      const agent = await createAgent(t);
      await setAgentStatus(t, agent.id, 'live');
      const id = await campaign(t, { name: 'Good', agentId: agent.id });
      await lead(t, id, 'granted');
      await lead(t, id, 'revoked');
      await lead(t, id, 'none');
      await lead(t, id, 'granted', 'paid');
      await campaign(t, { name: 'Predictive', type: 'predictive' });
      const body = await eligibility(t);
      expect(body).toEqual({
        tenant: { voice_ai_enabled: true, tier_allows_ai: true, paused: false, budget: { limit_usd: null, spent_usd_month_to_date: '0.0000', exhausted: false } },
        campaigns: [
          {
            campaign_id: id,
            name: 'Good',
            campaign_type: 'ai_voice',
            ai_agent_id: agent.id,
            eligible: true,
            reasons: [],
            consent: { consented_leads: 1, total_leads: 3, share: '0.3333' },
          },
        ],
      });
    });

    it('reports every reason in order: tenant gates, agent, disclosure and consent', async () => {
      const t = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
      const draft = await createAgent(t);
      const noAgent = await campaign(t, { name: 'No agent' });
      const notLive = await campaign(t, { name: 'Draft agent', agentId: draft.id });
      const flagged = await campaign(t, { name: 'Flagged predictive', type: 'predictive', aiVoice: true });
      await lead(t, notLive, 'granted');
      const body = await eligibility(t);
      expect(body.campaigns.map((c: { campaign_id: string; reasons: string[]; eligible: boolean }) => [c.campaign_id, c.eligible, c.reasons])).toEqual([
        [noAgent, false, ['no_ai_agent', 'disclosure_invalid', 'no_prior_express_consent_path']],
        [notLive, false, ['ai_agent_not_live', 'disclosure_invalid']],
        [flagged, false, ['no_ai_agent', 'disclosure_invalid', 'no_prior_express_consent_path']],
      ]);
      expect(body.campaigns[0].consent).toEqual({ consented_leads: 0, total_leads: 0, share: null });

      expect((await call('PUT', '/v1/artificial-voice-disclosure', { text: EN }, t.apiKey)).status).toBe(200);
      await sql(t, `UPDATE tenants SET ai_paused_at = now() WHERE id = app_tenant_id()`);
      expect((await app.request('PATCH', `/v1/admin/tenants/${t.tenantId}`, { token: ADMIN_TOKEN, body: { ai_monthly_budget_usd: 1 } })).status).toBe(200);
      await insertUsage(t, { seconds: 60, cost: '1.0000' });
      const gated = await eligibility(t, `?campaign_id=${notLive}`);
      expect(gated.tenant).toEqual({ voice_ai_enabled: true, tier_allows_ai: true, paused: true, budget: { limit_usd: '1.00', spent_usd_month_to_date: '1.0000', exhausted: true } });
      expect(gated.campaigns.map((c: { reasons: string[] }) => c.reasons)).toEqual([['ai_paused', 'budget_exhausted', 'ai_agent_not_live']]);
    });

    it('reports voice_ai_disabled and tier_not_eligible for a tenant without voice AI', async () => {
      const t = await provisionTenant(app, { tier: 'starter' });
      const id = await campaign(t, { name: 'Starter AI' });
      const body = await eligibility(t, `?campaign_id=${id}`);
      expect(body.tenant).toMatchObject({ voice_ai_enabled: false, tier_allows_ai: false });
      expect(body.campaigns[0].reasons.slice(0, 2)).toEqual(['voice_ai_disabled', 'tier_not_eligible']);
    });

    it("reports disclosure_invalid for an agent whose disclosure fails the engine's start check", async () => {
      const t = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
      expect((await call('PUT', '/v1/artificial-voice-disclosure', { text: EN }, t.apiKey)).status).toBe(200);
      const agent = await createAgent(t, { policy: { prohibited: ['acme'] } });
      await setAgentStatus(t, agent.id, 'live');
      const id = await campaign(t, { name: 'Prohibited disclosure', agentId: agent.id });
      await lead(t, id, 'granted');
      const body = await eligibility(t, `?campaign_id=${id}`);
      expect(body.campaigns[0].reasons).toEqual(['disclosure_invalid']);
    });

    it('is 404 for an unknown or foreign campaign and 400 for a malformed campaign_id', async () => {
      const foreign = await campaign(other, { name: `Foreign ${randomUUID().slice(0, 6)}` });
      expectError(await call('GET', `/v1/ai/eligibility?campaign_id=${foreign}`), 404, 'not_found');
      expectError(await call('GET', `/v1/ai/eligibility?campaign_id=${randomUUID()}`), 404, 'not_found');
      expectError(await call('GET', '/v1/ai/eligibility?campaign_id=abc'), 400, 'bad_request');
    });
  });

  describe('scope', () => {
    it('refuses a ddw_ widget token on every route with 403', async () => {
      const agent = await createAgent();
      const { conversation } = await sandboxOk(agent.id, { turns: ['yes'] });
      const { token: widget } = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
      for (const [method, path, body] of [
        ['POST', `/v1/ai/agents/${agent.id}/test`, { turns: ['yes'] }],
        ['GET', '/v1/ai/conversations'],
        ['GET', `/v1/ai/conversations/${conversation.id}`],
        ['GET', '/v1/ai/status'],
        ['GET', '/v1/ai/metrics/today'],
        ['GET', '/v1/ai/eligibility'],
      ] as const) {
        expectError(await call(method, path, body, widget), 403, 'forbidden');
      }
    });

    it('is 401 without a credential', async () => {
      expectError(await app.request('GET', '/v1/ai/status'), 401, 'unauthorized');
    });
  });
});
