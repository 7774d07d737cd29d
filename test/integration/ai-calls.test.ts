import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withTenantSql } from '../../src/lib/tenancy';
import { createSwitchCommands, speakableText } from '../../src/switch/esl';
import type { SwitchEvent } from '../../src/switch/simulator';
import { aiCallWorkflowId, campaignRunWorkflowId } from '../../workflows/ids';
import { callSessionWorkflowId } from '../../src/contracts/call-session';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, standbySeat, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';
import { recordWorkflowHistories } from '../helpers/workflow-histories';
import { AI_DISCLOSURE as DISCLOSURE, provisionAiTenant, type AiTenant } from '../helpers/ai-tenant';

jest.setTimeout(120_000);


let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let owner: Client;
const taskQueue = `ai-calls-${randomUUID()}`;
const prefix = daytimePrefix();
let serial = 0;

beforeAll(async () => {
  // Consumers stay on the line until the AI (or the test) ends the call.
  rig = await startSwitchRig({ ringMs: 100, talkMs: 60_000, promptMs: 100 });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
  owner = new Client({ connectionString: app.config.ownerDatabaseUrl });
  await owner.connect();
});
afterAll(async () => {
  await owner?.end();
  await worker?.stop();
  await app?.close();
  await rig?.close();
});
afterAll(() =>
  recordWorkflowHistories('ai-calls', [taskQueue], {
    aiCallWorkflow: ['activity:bridgeAiCallToHuman', 'activity:endAiConversation', 'activity:respondAiTurn', 'signal:aiStop', 'signal:aiTakeover'],
    callSessionWorkflow: ['activity:meterAiCall'],
  }),
);

const header = (ev: SwitchEvent, name: string) => ev.headers.find(([k]) => k === name)?.[1];

/** Every simulator event from now on, to wait for one that may already have happened. */
function watchEvents() {
  const events: SwitchEvent[] = [];
  const off = rig.sim.onEvent((ev) => events.push(ev));
  return {
    events,
    off,
    wait: (pred: (ev: SwitchEvent) => boolean, what: string) => waitFor(() => Promise.resolve(events.find(pred)), 20_000, what),
  };
}


const aiTenant = (extra: Record<string, unknown> = {}): Promise<AiTenant> => provisionAiTenant(app, extra);

async function aiCampaign(t: AiTenant, body: Record<string, unknown> = {}): Promise<string> {
  const res = await app.request('POST', '/v1/campaigns', {
    token: t.tenant.apiKey,
    body: { name: `ai-${randomUUID()}`, campaign_type: 'ai_voice', ai_agent_id: t.agentId, consult_config: {}, ...body },
  });
  expect(res.status).toBe(201);
  return res.body.campaign.id;
}

async function start(t: AiTenant, campaignId: string): Promise<void> {
  const res = await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: t.tenant.apiKey, body: { tick_ms: 200, batch_size: 5 } });
  expect(res.status).toBe(200);
}

async function stop(t: AiTenant, campaignId: string): Promise<void> {
  const res = await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: t.tenant.apiKey });
  expect(res.status).toBe(200);
  await app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(t.tenant.tenantId, campaignId)).result();
}

const phone = () => numberEnding(prefix, (serial += 1), 10);

/** One lead of the campaign through the import route (the verification facts travel with it). */
async function importLead(t: AiTenant, campaignId: string, to: string, fields: Record<string, unknown>): Promise<string> {
  const ref = `ai-${randomUUID()}`;
  const res = await app.request('POST', '/v1/debts/import', {
    token: t.tenant.apiKey,
    body: { debts: [{ external_ref: ref, consumer_ref: `c-${ref}`, amount_cents: 10_000, currency: 'USD', campaign_id: campaignId, ...fields, contacts: [{ phone_e164: to, is_primary: true }] }] },
  });
  expect(res.body.failed).toEqual([]);
  const found = await app.request('GET', `/v1/debts?external_ref=${encodeURIComponent(ref)}`, { token: t.tenant.apiKey });
  return found.body.debts[0].id;
}

async function originals(t: AiTenant, campaignId: string): Promise<any[]> {
  const res = await app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: t.tenant.apiKey });
  expect(res.status).toBe(200);
  return res.body.call_attempts;
}

function finalRow(t: AiTenant, campaignId: string, originalId: string): Promise<any> {
  return waitFor(
    async () => (await originals(t, campaignId)).find((r) => r.corrects_id === originalId && r.ended_at !== null),
    30_000,
    'the final row',
  );
}

interface ConversationRow {
  id: string;
  status: string;
  outcome: string | null;
  transcript: Array<{ speaker: string; text: string }>;
  events: Array<{ type: string }>;
  policy_version: number;
  taken_over_by: string | null;
  kind: string;
}

function conversation(t: AiTenant, callUuid: string): Promise<ConversationRow | undefined> {
  return withTenantSql(app.deps.db, t.tenant.tenantId, async (sql) => {
    const [row] = await sql.query<ConversationRow>(
      'SELECT id, status, outcome, transcript, events, policy_version, taken_over_by, kind FROM ai_conversations WHERE call_uuid = $1',
      [callUuid],
    );
    return row;
  });
}

function waitConversation(t: AiTenant, callUuid: string, pred: (c: ConversationRow) => boolean, what: string): Promise<ConversationRow> {
  return waitFor(async () => {
    const c = await conversation(t, callUuid);
    return c && pred(c) ? c : undefined;
  }, 30_000, what);
}

/** The campaign's one placed call, once the AI has greeted. */
async function greetedCall(t: AiTenant, campaignId: string): Promise<{ original: any; conv: ConversationRow }> {
  const original = await waitFor(async () => (await originals(t, campaignId)).find((r) => r.corrects_id === null && r.call_uuid), 20_000, 'a placed call');
  const conv = await waitConversation(t, original.call_uuid, (c) => c.transcript.length > 0, 'the greeting');
  return { original, conv };
}

/**
 * A history as text with every payload decoded, so a check reads what the Web UI shows (the
 * history's JSON form carries payload bytes as base64 `data`).
 */
function payloadText(history: unknown): string {
  return JSON.stringify(history, (key, value: unknown) => (key === 'data' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : value));
}

const say = (uuid: string, text: string) => createSwitchCommands(rig.esl).simulateSpeech(uuid, text);

async function usageRows(t: AiTenant): Promise<Array<{ call_uuid: string; billable_seconds: number; cost_usd: string; minute_rate_usd: string }>> {
  return withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
    sql.query('SELECT call_uuid, billable_seconds, cost_usd::text, minute_rate_usd::text FROM ai_usage ORDER BY answered_at'),
  );
}

async function runStats(t: AiTenant, campaignId: string): Promise<any> {
  const res = await app.request('GET', `/v1/campaigns/${campaignId}/stats`, { token: t.tenant.apiKey });
  expect(res.status).toBe(200);
  return res.body.stats;
}

describe('ai_voice campaign calls', () => {
  it('greets with the disclosure first, records a promise inside the policy from spoken turns, and ends metered with ai_used', async () => {
    const t = await aiTenant();
    const campaignId = await aiCampaign(t, { consult_config: { factor: 'account_last4' } });
    const debtId = await importLead(t, campaignId, phone(), { account_number: '4400-1234' });
    const watch = watchEvents();
    await start(t, campaignId);
    const { original, conv } = await greetedCall(t, campaignId);
    expect(conv).toMatchObject({ kind: 'call', status: 'active', policy_version: 1 });
    expect(conv.transcript[0]).toMatchObject({ speaker: 'agent', text: DISCLOSURE });
    expect(conv.events[0]).toEqual({ type: 'disclosure_given' });
    // The switch speaks the greeting's stored sentences as one utterance, the disclosure first.
    const greeting = conv.transcript.filter((l) => l.speaker === 'agent').map((l) => l.text);
    await watch.wait(
      (ev) =>
        ev.name === 'CHANNEL_EXECUTE' &&
        header(ev, 'Unique-ID') === original.call_uuid &&
        header(ev, 'Application') === 'speak' &&
        header(ev, 'Application-Data') === `flite|kal|${speakableText(greeting.join(' '))}`,
      'the greeting spoken',
    );

    await say(original.call_uuid, 'yes speaking');
    await waitConversation(t, original.call_uuid, (c) => c.transcript.length > 3, 'the verification question');
    await say(original.call_uuid, '1234');
    await waitConversation(t, original.call_uuid, (c) => c.events.some((e) => e.type === 'offer'), 'an offer');
    await say(original.call_uuid, 'yes I agree');
    const ended = await waitConversation(t, original.call_uuid, (c) => c.status === 'ended', 'the end of the conversation');
    expect(ended.outcome).toBe('promise_to_pay');
    const promise = ended.events.find((e) => e.type === 'promise') as any;
    expect(promise).toMatchObject({ kind: 'lump_sum', amount_cents: 10_000, method: 'promise' });

    // After its closing words the AI hangs up: the final row says AI was used, the call is metered once.
    const final = await finalRow(t, campaignId, original.id);
    expect(final).toMatchObject({ disposition: 'answered_human', ai_used: true });
    // What the consumer heard, on the call's timeline: the disclosure, then every AI sentence as it was said.
    const timeline = await waitFor(async () => {
      const res = await app.request('GET', `/v1/calls/${original.call_uuid}`, { token: t.tenant.apiKey });
      const entries = res.body.timeline as Array<Record<string, unknown>>;
      return entries.some((e) => e.event === 'hangup') ? entries : undefined;
    }, 20_000, 'the timeline');
    const spoken = timeline.filter((e) => e.event === 'spoken');
    expect(spoken[0]).toMatchObject({ purpose: 'disclosure', text: speakableText(DISCLOSURE), turn: 0, ai_conversation_id: conv.id });
    expect(spoken.slice(1).every((e) => e.purpose === 'ai_turn')).toBe(true);
    const said = ended.transcript.filter((l) => l.speaker === 'agent').map((l) => speakableText(l.text));
    expect(spoken.map((e) => e.text)).toEqual(said);
    expect(rig.sim.spoken(original.call_uuid).map((x) => x.text).join(' ')).toBe(said.join(' '));
    const usage = await waitFor(async () => ((await usageRows(t)).length ? await usageRows(t) : undefined), 20_000, 'the usage row');
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ call_uuid: original.call_uuid, minute_rate_usd: '0.1200', cost_usd: '0.1200' });
    const promises = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
      sql.query<{ amount_cents: string; debt_id: string }>('SELECT amount_cents::text, debt_id FROM promises'),
    );
    expect(promises).toEqual([{ amount_cents: '10000', debt_id: debtId }]);
    watch.off();
    await stop(t, campaignId);
  });

  it('hands the consumer to a seated agent on "I want to talk to a person"', async () => {
    const t = await aiTenant();
    const [seat] = await seatAgents(app, rig, t.tenant, 1);
    const campaignId = await aiCampaign(t);
    await seedLeads(app, t.tenant, campaignId, [phone()]);
    await start(t, campaignId);
    const { original } = await greetedCall(t, campaignId);
    await say(original.call_uuid, 'I want to talk to a person');
    const conv = await waitConversation(t, original.call_uuid, (c) => c.status === 'ended', 'the handoff');
    expect(conv.outcome).toBe('handoff');
    expect(conv.events.find((e) => e.type === 'handoff')).toMatchObject({ trigger: 'human_requested', action: 'transfer' });
    await waitFor(() => Promise.resolve(rig.sim.channel(original.call_uuid)?.bridgedTo ? true : undefined), 20_000, 'the bridge');
    rig.sim.remoteHangup(original.call_uuid);
    const final = await finalRow(t, campaignId, original.id);
    expect(final).toMatchObject({ ai_used: true, agent_id: seat });
    await stop(t, campaignId);
  });

  it('records a verbal revocation when the consumer asks the AI to stop calling, with the number masked in the transcript', async () => {
    const t = await aiTenant();
    const campaignId = await aiCampaign(t);
    const to = phone();
    await seedLeads(app, t.tenant, campaignId, [to]);
    await start(t, campaignId);
    const { original } = await greetedCall(t, campaignId);
    await say(original.call_uuid, 'stop calling me at 303 555 0123');
    const conv = await waitConversation(t, original.call_uuid, (c) => c.status === 'ended', 'the end');
    // Consumer words are stored with long digit runs masked to their last four.
    expect(conv.transcript.find((l) => l.speaker === 'consumer')!.text).toBe('stop calling me at *** *** 0123');
    const dnc = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
      sql.query<{ phone_e164: string; source: string }>('SELECT phone_e164, source FROM dnc_entries WHERE removed_at IS NULL'),
    );
    expect(dnc).toEqual([{ phone_e164: to, source: 'verbal_revocation' }]);
    await finalRow(t, campaignId, original.id);
    // The words crossed Temporal sealed: neither workflow history (kept, readable in the Web UI) holds them.
    for (const id of [callSessionWorkflowId(t.tenant.tenantId, original.call_uuid), aiCallWorkflowId(t.tenant.tenantId, original.call_uuid)]) {
      const history = payloadText(await app.deps.temporal!.workflow.getHandle(id).fetchHistory());
      expect(history).toContain('"eventType"');
      expect(history).not.toMatch(/555 0123|stop calling/);
    }
    await stop(t, campaignId);
  });

  it('hangs up at the hard ceiling (ai_max_call_seconds) with outcome max_duration, billing at most the ceiling', async () => {
    const t = await aiTenant({ ai_max_call_seconds: 3 });
    const campaignId = await aiCampaign(t);
    await seedLeads(app, t.tenant, campaignId, [phone()]);
    await start(t, campaignId);
    const { original } = await greetedCall(t, campaignId);
    const final = await finalRow(t, campaignId, original.id);
    expect(final).toMatchObject({ hangup_cause: 'ALLOTTED_TIMEOUT', ai_used: true });
    const conv = await conversation(t, original.call_uuid);
    expect(conv).toMatchObject({ status: 'ended', outcome: 'max_duration' });
    const usage = await waitFor(async () => ((await usageRows(t)).length ? await usageRows(t) : undefined), 20_000, 'the usage row');
    expect(usage[0]!.billable_seconds).toBeLessThanOrEqual(3);
    expect(usage[0]!.cost_usd).toBe('0.1200');
    await stop(t, campaignId);
  });
});

describe('gates of the dial tick', () => {
  it('places no AI call once the month-to-date cost reached ai_monthly_budget_usd, and says why', async () => {
    const t = await aiTenant({ ai_monthly_budget_usd: 1 });
    await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
      sql.query(
        `INSERT INTO ai_usage (tenant_id, call_uuid, answered_at, ended_at, billable_seconds, minute_rate_usd, cost_usd)
         VALUES (app_tenant_id(), $1, now(), now(), 500, 0.12, 1.0000)`,
        [randomUUID()],
      ),
    );
    const campaignId = await aiCampaign(t);
    await seedLeads(app, t.tenant, campaignId, [phone()]);
    await start(t, campaignId);
    const stats = await waitFor(async () => {
      const s = await runStats(t, campaignId);
      return s?.idle === 'ai_budget_exhausted' ? s : undefined;
    }, 20_000, 'the budget refusal');
    expect(stats.dialed).toBe(0);
    expect((await originals(t, campaignId)).filter((r) => r.call_uuid)).toEqual([]);
    await stop(t, campaignId);
  });

  it('does not dial for an agent that is not live', async () => {
    const t = await aiTenant();
    const paused = await app.request('PATCH', `/v1/ai/agents/${t.agentId}`, { token: t.tenant.apiKey, body: { status: 'paused' } });
    expect(paused.status).toBe(200);
    const campaignId = await aiCampaign(t);
    await seedLeads(app, t.tenant, campaignId, [phone()]);
    await start(t, campaignId);
    await waitFor(async () => ((await runStats(t, campaignId))?.idle === 'ai_agent_not_live' ? true : undefined), 20_000, 'the agent refusal');
    expect((await originals(t, campaignId)).filter((r) => r.call_uuid)).toEqual([]);
    await stop(t, campaignId);
  });
});

describe('campaign ai_agent_id', () => {
  it('is validated on write and required to start an ai_voice campaign', async () => {
    const t = await aiTenant();
    const other = await aiTenant();
    const base = { name: `ai-${randomUUID()}`, campaign_type: 'ai_voice' };
    for (const bad of [randomUUID(), other.agentId, 'not-a-uuid']) {
      const res = await app.request('POST', '/v1/campaigns', { token: t.tenant.apiKey, body: { ...base, ai_agent_id: bad } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid');
    }
    const bare = await app.request('POST', '/v1/campaigns', { token: t.tenant.apiKey, body: base });
    expect(bare.status).toBe(201);
    expect(bare.body.campaign.ai_agent_id).toBeNull();
    const refused = await app.request('POST', `/v1/campaigns/${bare.body.campaign.id}/start`, { token: t.tenant.apiKey });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('conflict');
    const set = await app.request('PATCH', `/v1/campaigns/${bare.body.campaign.id}`, { token: t.tenant.apiKey, body: { ai_agent_id: t.agentId } });
    expect(set.status).toBe(200);
    expect(set.body.campaign.ai_agent_id).toBe(t.agentId);
    const retired = await app.request('DELETE', `/v1/ai/agents/${t.agentId}`, { token: t.tenant.apiKey });
    expect([200, 204]).toContain(retired.status);
    const again = await app.request('POST', `/v1/campaigns/${bare.body.campaign.id}/start`, { token: t.tenant.apiKey });
    expect(again.status).toBe(409);
  });
});

describe('kill switch', () => {
  it('stops a live AI call with a goodbye, blocks new ones, and resumes; both verbs are idempotent', async () => {
    const t = await aiTenant();
    const campaignId = await aiCampaign(t);
    await seedLeads(app, t.tenant, campaignId, [phone()]);
    await start(t, campaignId);
    const { original, conv } = await greetedCall(t, campaignId);

    const paused = await app.request('POST', '/v1/ai/pause', { token: t.tenant.apiKey, body: { reason: 'compliance review' } });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, reason: 'compliance review', stopped_calls: 1 });
    const stopped = await waitConversation(t, original.call_uuid, (c) => c.status === 'ended', 'the stop');
    expect(stopped.outcome).toBe('paused');
    expect(stopped.transcript.at(-1)).toMatchObject({ speaker: 'agent' });
    expect(stopped.transcript.at(-1)!.text).toMatch(/goodbye/i);
    expect(conv.id).toBe(stopped.id);
    await finalRow(t, campaignId, original.id);

    const again = await app.request('POST', '/v1/ai/pause', { token: t.tenant.apiKey });
    expect(again.body).toEqual({ paused: true, paused_at: paused.body.paused_at, reason: 'compliance review', stopped_calls: 0 });
    const audits = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) => sql.query<{ action: string }>(`SELECT action FROM audit_log WHERE action LIKE 'ai.%'`));
    expect(audits.map((a) => a.action)).toEqual(['ai.paused']);

    // A new lead is not dialed while paused.
    await seedLeads(app, t.tenant, campaignId, [phone()]);
    await waitFor(async () => ((await runStats(t, campaignId))?.idle === 'ai_paused' ? true : undefined), 20_000, 'the paused tick');
    expect((await originals(t, campaignId)).filter((r) => r.corrects_id === null && r.call_uuid)).toHaveLength(1);

    for (let i = 0; i < 2; i += 1) {
      const resumed = await app.request('POST', '/v1/ai/resume', { token: t.tenant.apiKey });
      expect(resumed.status).toBe(200);
      expect(resumed.body).toEqual({ paused: false });
    }
    await waitFor(async () => ((await originals(t, campaignId)).filter((r) => r.corrects_id === null && r.call_uuid).length === 2 ? true : undefined), 20_000, 'a call after resume');
    await stop(t, campaignId);
    for (const ch of rig.sim.channels()) if (ch.variables.dd_tenant_id === t.tenant.tenantId) rig.sim.remoteHangup(ch.uuid);
  });

  it('is management scope only, and rejects a reason over 500 characters', async () => {
    const t = await aiTenant();
    const { token } = await insertAgentWidgetToken(app, t.tenant.tenantId, t.tenant.adminAgentId);
    for (const path of ['/v1/ai/pause', '/v1/ai/resume', `/v1/ai/conversations/${randomUUID()}/takeover`]) {
      const res = await app.request('POST', path, { token, body: { supervisor_ext: '1' } });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    const long = await app.request('POST', '/v1/ai/pause', { token: t.tenant.apiKey, body: { reason: 'x'.repeat(501) } });
    expect(long.status).toBe(400);
    expect((await app.request('POST', '/v1/ai/pause', {})).status).toBe(401);
    expect((await app.request('POST', '/v1/ai/resume', {})).status).toBe(401);
  });
});

describe('takeover', () => {
  it('audits first, bridges a supervisor extension and marks the conversation taken over; then 409', async () => {
    const t = await aiTenant();
    const campaignId = await aiCampaign(t);
    await seedLeads(app, t.tenant, campaignId, [phone()]);
    await start(t, campaignId);
    const { original, conv } = await greetedCall(t, campaignId);
    const ext = `55${Math.floor(Math.random() * 9000) + 1000}`;
    const standby = await app.request('POST', '/v1/agents', { token: t.tenant.apiKey, body: { name: 'Takeover', email: `takeover-${randomUUID()}@example.com`, sip_extension: ext } });
    await standbySeat(app, rig, t.tenant, { id: standby.body.agent.id, extension: ext });

    // Evidence first: with the evidence store failing, nothing reaches the switch and the call stays with the AI.
    const fault = `fail_ai_takeover_${t.tenant.tenantId.replace(/-/g, '')}`;
    await owner.query(`CREATE FUNCTION ${fault}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.tenant_id = '${t.tenant.tenantId}'::uuid AND NEW.action = 'ai.conversation.taken_over' THEN
          RAISE EXCEPTION 'evidence store unavailable (test fault)';
        END IF;
        RETURN NEW;
      END $$`);
    await owner.query(`CREATE TRIGGER ${fault} BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION ${fault}()`);
    let failed;
    try {
      failed = await app.request('POST', `/v1/ai/conversations/${conv.id}/takeover`, { token: t.tenant.apiKey, body: { supervisor_ext: ext } });
    } finally {
      await owner.query(`DROP TRIGGER ${fault} ON audit_log`);
      await owner.query(`DROP FUNCTION ${fault}()`);
    }
    expect(failed.status).toBe(503);
    expect(failed.body.error.code).toBe('audit_unavailable');
    expect(rig.sim.channels().filter((ch) => ch.destination.includes(ext))).toEqual([]);
    expect((await conversation(t, original.call_uuid))!.status).toBe('active');

    const res = await app.request('POST', `/v1/ai/conversations/${conv.id}/takeover`, { token: t.tenant.apiKey, body: { supervisor_ext: ext } });
    expect(res.status).toBe(200);
    expect(res.body.conversation).toMatchObject({ id: conv.id, status: 'taken_over', taken_over_by: `ext:${ext}`, call_id: original.call_uuid });
    expect(res.body.conversation.taken_over_at).toEqual(expect.any(String));
    await waitFor(() => Promise.resolve(rig.sim.channel(original.call_uuid)?.bridgedTo ? true : undefined), 20_000, 'the bridge to the supervisor');
    const [audit] = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
      sql.query<{ subject_id: string; payload: any }>(`SELECT subject_id, payload FROM audit_log WHERE action = 'ai.conversation.taken_over'`),
    );
    expect(audit).toMatchObject({ subject_id: conv.id, payload: { supervisor_ext: ext, agent_id: null } });

    const twice = await app.request('POST', `/v1/ai/conversations/${conv.id}/takeover`, { token: t.tenant.apiKey, body: { supervisor_ext: ext } });
    expect(twice.status).toBe(409);
    rig.sim.remoteHangup(original.call_uuid);
    const final = await finalRow(t, campaignId, original.id);
    expect(final.ai_used).toBe(true);
    await stop(t, campaignId);
  });

  it('answers 404 for unknown, malformed and foreign ids, 409 for a sandbox, 400 for bad bodies, 409 for a busy agent', async () => {
    const t = await aiTenant();
    const other = await aiTenant();
    const [sandbox] = await withTenantSql(app.deps.db, other.tenant.tenantId, (sql) =>
      sql.query<{ id: string }>(
        `INSERT INTO ai_conversations (tenant_id, ai_agent_id, policy_version, kind, status) VALUES (app_tenant_id(), $1, 1, 'sandbox', 'ended') RETURNING id`,
        [other.agentId],
      ),
    );
    const [live] = await withTenantSql(app.deps.db, other.tenant.tenantId, (sql) =>
      sql.query<{ id: string }>(
        `INSERT INTO ai_conversations (tenant_id, ai_agent_id, policy_version, kind, call_uuid) VALUES (app_tenant_id(), $1, 1, 'call', $2) RETURNING id`,
        [other.agentId, randomUUID()],
      ),
    );
    const takeover = (tenant: ProvisionedTenant, id: string, body: unknown) =>
      app.request('POST', `/v1/ai/conversations/${id}/takeover`, { token: tenant.apiKey, body });
    for (const id of [randomUUID(), sandbox!.id, live!.id]) {
      const res = await takeover(t.tenant, id, { supervisor_ext: '1234' });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await takeover(t.tenant, 'nope', { supervisor_ext: '1234' })).status).toBe(404);
    const sandboxed = await takeover(other.tenant, sandbox!.id, { supervisor_ext: '1234' });
    expect(sandboxed.status).toBe(409);
    for (const body of [{}, { supervisor_ext: '1234', agent_id: randomUUID() }, { supervisor_ext: 'has space' }, { extra: 1, supervisor_ext: '1' }]) {
      const res = await takeover(other.tenant, live!.id, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('bad_request');
    }
    const unknownAgent = await takeover(other.tenant, live!.id, { agent_id: randomUUID() });
    expect(unknownAgent.status).toBe(400);
    expect(unknownAgent.body.error.code).toBe('invalid');
    const busy = await takeover(other.tenant, live!.id, { agent_id: other.tenant.adminAgentId });
    expect(busy.status).toBe(409);
    // The call of this row never existed: nothing to signal.
    const gone = await takeover(other.tenant, live!.id, { supervisor_ext: '1234' });
    expect(gone.status).toBe(409);
  });
});
