import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { withTenant, withTenantSql } from '../../src/lib/tenancy';
import { createSwitchCommands } from '../../src/switch/esl';
import { callbackWorkflowId, promiseWorkflowId } from '../../workflows/ids';
import { daytimePrefix, numberEnding, runWorker, seatAgents, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { startTestApp, type TestApp } from '../helpers/harness';
import { importAiLead, provisionAiTenant, type AiTenant as ProvisionedAiTenant } from '../helpers/ai-tenant';

/**
 * Right-party safety and the outcomes of live AI calls (issue 16 items 3 and 4), driven the way
 * production meets them: debts and their verification facts through the import route, the call
 * by the campaign run on the switch simulator, the consumer's words as recognizer events, the
 * next dial through POST /v1/campaigns/{id}/dial and START through the provider webhook. Nothing
 * here writes a fact's column.
 */

jest.setTimeout(180_000);

const ACCOUNT = 'ACCT-0011-7788';
const HMAC_SECRET = 'provider-hmac-secret';

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let receiver: http.Server;
const taskQueue = `ai-outcomes-${randomUUID()}`;
const prefix = daytimePrefix();
let serial = Math.floor(Math.random() * 50);

beforeAll(async () => {
  receiver = http.createServer((_req, res) => res.writeHead(200).end('ok'));
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  rig = await startSwitchRig({ ringMs: 100, talkMs: 60_000, promptMs: 100 });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, EGRESS_ALLOWLIST: origin }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
  receiverOrigin = origin;
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});
let receiverOrigin = '';

/** A ZIP code whose zone is in daytime now, so the address never puts the call in quiet hours. */
function daytimeZip(): string {
  const zips: Array<[string, string]> = [
    ['80202', 'America/Denver'],
    ['96813', 'Pacific/Honolulu'],
    ['30303', 'America/New_York'],
    ['60601', 'America/Chicago'],
    ['94105', 'America/Los_Angeles'],
    // Saipan (Northern Mariana Islands, UTC+10) covers 23:00-09:00 UTC, when no state is in daytime.
    ['96950', 'Pacific/Saipan'],
    // An Armed Forces Europe ZIP (APO AE) fixes no zone of its own; the number's zone decides. It
    // covers 09:00-14:00 UTC, when no US zone is in daytime.
    ['09021', 'Europe/Berlin'],
  ];
  const hour = (zone: string) => Number(new Intl.DateTimeFormat('en-US', { timeZone: zone, hour: 'numeric', hourCycle: 'h23' }).format(new Date()));
  const found = zips.find(([, zone]) => hour(zone) >= 9 && hour(zone) < 19);
  if (!found) throw new Error('no daytime ZIP');
  return found[0];
}

interface AiTenant extends ProvisionedAiTenant {
  manualCampaignId: string | null;
}

async function aiTenant(): Promise<AiTenant> {
  return { ...(await provisionAiTenant(app)), manualCampaignId: null };
}

interface Lead {
  debtId: string;
  ref: string;
  phone: string;
  campaignId: string;
}

async function importLead(t: AiTenant, campaignId: string, fields: Record<string, unknown>, contact: Record<string, unknown> = {}): Promise<Lead> {
  const phone = numberEnding(prefix, (serial += 1), 10);
  const { debtId, ref } = await importAiLead(app, t, { campaignId, phone, fields: { account_number: ACCOUNT, ...fields }, contact });
  return { debtId, ref, phone, campaignId };
}

interface ConversationRow {
  id: string;
  status: string;
  outcome: string | null;
  transcript: Array<{ speaker: string; text: string }>;
  events: Array<{ type: string; [k: string]: unknown }>;
  engine_state: unknown;
}

function conversation(t: AiTenant, callUuid: string): Promise<ConversationRow | undefined> {
  return withTenantSql(app.deps.db, t.tenant.tenantId, async (sql) => {
    const [row] = await sql.query<ConversationRow>('SELECT id, status, outcome, transcript, events, engine_state FROM ai_conversations WHERE call_uuid = $1', [callUuid]);
    return row;
  });
}

function waitConversation(t: AiTenant, callUuid: string, pred: (c: ConversationRow) => boolean, what: string): Promise<ConversationRow> {
  return waitFor(async () => {
    const c = await conversation(t, callUuid);
    return c && pred(c) ? c : undefined;
  }, 30_000, what);
}

async function originals(t: AiTenant, campaignId: string): Promise<any[]> {
  const res = await app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: t.tenant.apiKey });
  expect(res.status).toBe(200);
  return res.body.call_attempts;
}

interface LiveCall {
  lead: Lead;
  uuid: string;
  originalId: string;
}

/** An ai_voice campaign with consult_config, one imported lead, and its call once the AI has greeted. */
async function liveCall(t: AiTenant, consult: Record<string, unknown>, fields: Record<string, unknown> = {}, contact: Record<string, unknown> = {}): Promise<LiveCall> {
  const created = await app.request('POST', '/v1/campaigns', {
    token: t.tenant.apiKey,
    body: { name: `ai-${randomUUID()}`, campaign_type: 'ai_voice', ai_agent_id: t.agentId, consult_config: consult },
  });
  expect(created.status).toBe(201);
  const campaignId: string = created.body.campaign.id;
  const lead = await importLead(t, campaignId, fields, contact);
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: t.tenant.apiKey, body: { tick_ms: 200, batch_size: 5 } })).status).toBe(200);
  const original = await waitFor(async () => (await originals(t, campaignId)).find((r) => r.corrects_id === null && r.call_uuid), 20_000, 'a placed call');
  await waitConversation(t, original.call_uuid, (c) => c.transcript.length > 0, 'the greeting');
  return { lead, uuid: original.call_uuid, originalId: original.id };
}

/** Says each line in turn, each once the AI answered the previous one. */
async function converse(t: AiTenant, call: LiveCall, lines: string[]): Promise<ConversationRow> {
  for (const line of lines) {
    const before = (await conversation(t, call.uuid))!.transcript.filter((l) => l.speaker === 'consumer').length;
    await createSwitchCommands(rig.esl).simulateSpeech(call.uuid, line);
    await waitConversation(t, call.uuid, (c) => c.transcript.filter((l) => l.speaker === 'consumer').length > before, `the answer to "${line}"`);
  }
  return (await conversation(t, call.uuid))!;
}

/** The call's end: the conversation closed and the final CDR row written (the AI hung up). */
async function ended(t: AiTenant, call: LiveCall): Promise<ConversationRow> {
  const conv = await waitConversation(t, call.uuid, (c) => c.status === 'ended', 'the end of the conversation');
  await waitFor(async () => (await originals(t, call.lead.campaignId)).find((r) => r.corrects_id === call.originalId && r.ended_at !== null), 30_000, 'the final row');
  await app.request('POST', `/v1/campaigns/${call.lead.campaignId}/stop`, { token: t.tenant.apiKey });
  return conv;
}

const agentLines = (c: ConversationRow) => c.transcript.filter((l) => l.speaker === 'agent').map((l) => l.text);
const types = (c: ConversationRow) => c.events.map((e) => e.type);

/** Nothing about the debt in what the AI said: creditor, balance, account digits, the debt-collection notice, an offer. */
function nothingOfTheDebt(t: AiTenant, c: ConversationRow): void {
  for (const line of agentLines(c)) {
    for (const detail of [t.tenant.name, '$100.00', '100.00', '7788', 'attempt to collect a debt', 'payment']) {
      expect({ line, says: line.includes(detail) }).toEqual({ line, says: false });
    }
  }
  expect(types(c).filter((x) => ['verified', 'mini_miranda_given', 'offer', 'promise'].includes(x))).toEqual([]);
}

async function conversations(t: AiTenant, debtId: string): Promise<Array<{ source: string; call_attempt_id: string; phone_e164: string }>> {
  return withTenantSql(app.deps.db, t.tenant.tenantId, (sql) => sql.query('SELECT source, call_attempt_id, phone_e164 FROM conversations WHERE debt_id = $1', [debtId]));
}

async function auditActions(t: AiTenant, debtId: string): Promise<string[]> {
  const rows = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
    sql.query<{ action: string }>('SELECT action FROM audit_log WHERE subject_id = $1 ORDER BY occurred_at', [debtId]),
  );
  return rows.map((r) => r.action);
}

/** What the decision behind a refused dial found at one gate (its evidence on the audit chain). */
async function gateOutcome(t: AiTenant, decisionId: string, gate: string): Promise<string | undefined> {
  const entry = await withTenant(app.deps.db, t.tenant.tenantId, (tx) => tx.auditLog.findUniqueOrThrow({ where: { id: decisionId } }));
  return (entry.payload as { checks: Array<{ gate: string; outcome: string }> }).checks.find((c) => c.gate === gate)?.outcome;
}

async function debtState(t: AiTenant, debtId: string): Promise<string> {
  const res = await app.request('GET', `/v1/debts/${debtId}`, { token: t.tenant.apiKey });
  expect(res.status).toBe(200);
  return res.body.debt.state;
}

/**
 * The next dial of the debt, by a person: the debt moves to a running manual campaign (through the
 * import, like a client reassigning it) with a seated agent, then POST /v1/campaigns/{id}/dial.
 * A call that goes out is hung up at once.
 */
async function dialAgain(t: AiTenant, lead: Lead): Promise<any> {
  if (!t.manualCampaignId) {
    await seatAgents(app, rig, t.tenant, 1);
    const created = await app.request('POST', '/v1/campaigns', { token: t.tenant.apiKey, body: { name: `manual-${randomUUID()}`, campaign_type: 'manual' } });
    t.manualCampaignId = created.body.campaign.id;
    expect((await app.request('POST', `/v1/campaigns/${t.manualCampaignId}/start`, { token: t.tenant.apiKey })).status).toBe(200);
  }
  const moved = await app.request('POST', '/v1/debts/import', {
    token: t.tenant.apiKey,
    body: { debts: [{ external_ref: lead.ref, consumer_ref: `c-${lead.ref}`, campaign_id: t.manualCampaignId }] },
  });
  expect(moved.body.failed).toEqual([]);
  const res = await app.request('POST', `/v1/campaigns/${t.manualCampaignId}/dial`, { token: t.tenant.apiKey, body: { debt_id: lead.debtId } });
  expect(res.status).toBe(200);
  if (res.body.status === 'dialing') await app.request('POST', `/v1/calls/${res.body.call_id}/hangup`, { token: t.tenant.apiKey });
  return res.body;
}

describe('right-party safety', () => {
  let t: AiTenant;
  beforeAll(async () => {
    t = await aiTenant();
  });

  it('with consult_config {} a yes to the name gets a person or a callback, nothing of the debt, no conversation, and the next dial goes out', async () => {
    const call = await liveCall(t, {});
    const conv = await converse(t, call, ['yes speaking', 'how much do I owe?', 'I can pay 50 dollars', 'no thanks']);
    expect(agentLines(conv)).toContain('Would you like to speak with a person now? If now is not a good time, just say call me later and we will call you back.');
    nothingOfTheDebt(t, conv);
    const closed = await ended(t, call);
    nothingOfTheDebt(t, closed);
    expect(closed.outcome).toBe('completed');
    expect(await conversations(t, call.lead.debtId)).toEqual([]);
    expect((await dialAgain(t, call.lead)).status).toBe('dialing');
  });

  it.each([
    ['account_last4', {}, {}, '7788', '1234'],
    ['zip', {}, { postal_code: 'ZIP' }, 'ZIP', '00000'],
    ['dob', { dob: '1980-03-15' }, {}, 'March 15 1980', '03/16/1980'],
    ['ssn_last4', { ssn_last4: '4321' }, {}, '4 3 2 1', '4322'],
    ['pin', { pin: '246813' }, {}, '246813', '246814'],
  ] as Array<[string, Record<string, unknown>, Record<string, unknown>, string, string]>)(
    'factor %s: a wrong answer does not verify, the right one does, then the debt is told and the call is a conversation',
    async (factor, fields, contact, right, wrong) => {
      const zip = daytimeZip();
      const withZip = (v: unknown) => (v === 'ZIP' ? zip : v);
      const call = await liveCall(t, { factor, max_attempts: 3, expose: ['balance'] }, fields, Object.fromEntries(Object.entries(contact).map(([k, v]) => [k, withZip(v)])));
      const before = await converse(t, call, ['yes speaking', wrong]);
      expect(before.events.filter((e) => e.type === 'verification_attempt')).toEqual([{ type: 'verification_attempt', ok: false, attempt: 1 }]);
      nothingOfTheDebt(t, before);
      // The expected answer is stored only sealed.
      expect((before.engine_state as any).state.verification.expected).toMatch(/^v2\./);
      const after = await converse(t, call, [String(withZip(right))]);
      expect(after.events.filter((e) => e.type === 'verification_attempt').map((e) => e.ok)).toEqual([false, true]);
      expect(types(after)).toEqual(expect.arrayContaining(['verified', 'mini_miranda_given', 'offer']));
      expect(agentLines(after)).toEqual(expect.arrayContaining([`This call is on behalf of ${t.tenant.name}.`, 'Your current balance is $100.00.']));
      // expose names only the balance: the account's digits stay unsaid after verification too.
      expect(agentLines(after).filter((l) => l.includes('7788'))).toEqual([]);
      const conversationRows = await conversations(t, call.lead.debtId);
      expect(conversationRows).toEqual([{ source: 'ai_verified', call_attempt_id: call.originalId, phone_e164: call.lead.phone }]);
      await createSwitchCommands(rig.esl).simulateSpeech(call.uuid, 'stop calling');
      await ended(t, call);
    },
  );

  it('ends the call once max_attempts wrong answers are given, with no conversation, and the next dial goes out', async () => {
    const call = await liveCall(t, { factor: 'pin', max_attempts: 2 }, { pin: '5555' });
    await converse(t, call, ['yes', '1111', '2222']);
    const conv = await ended(t, call);
    expect(conv.outcome).toBe('verification_failed');
    expect(conv.events.filter((e) => e.type === 'verification_attempt')).toHaveLength(2);
    expect(conv.events.find((e) => e.type === 'verification_failed')).toEqual({ type: 'verification_failed', reason: 'max_attempts' });
    nothingOfTheDebt(t, conv);
    expect(await conversations(t, call.lead.debtId)).toEqual([]);
    expect((await dialAgain(t, call.lead)).status).toBe('dialing');
  });
});

describe('AI outcomes land like an agent disposition', () => {
  let t: AiTenant;
  beforeAll(async () => {
    t = await aiTenant();
  });

  const verified = (extra: string[]) => ['yes speaking', '7788', ...extra];

  it('a promise: promise.recorded in the outbox, the debt in promise_to_pay, its deadline timer, an audit entry; the next dial is blocked regf_post_contact', async () => {
    const hook = await app.request('POST', '/v1/webhooks', { token: t.tenant.apiKey, body: { url: `${receiverOrigin}/hooks`, events: ['promise.recorded'] } });
    expect(hook.status).toBe(201);
    const call = await liveCall(t, { factor: 'account_last4' });
    await converse(t, call, verified(['yes I agree']));
    const conv = await ended(t, call);
    expect(conv.outcome).toBe('promise_to_pay');
    const [promise] = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
      sql.query<{ id: string; amount_cents: string; call_attempt_id: string }>('SELECT id, amount_cents::text, call_attempt_id FROM promises WHERE debt_id = $1', [call.lead.debtId]),
    );
    expect(promise).toMatchObject({ amount_cents: '10000', call_attempt_id: call.originalId });
    const outbox = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
      sql.query<{ event: string; event_id: string }>('SELECT event, event_id FROM webhook_deliveries WHERE event_id = $1', [promise!.id]),
    );
    expect(outbox).toEqual([{ event: 'promise.recorded', event_id: promise!.id }]);
    expect(await debtState(t, call.lead.debtId)).toBe('promise_to_pay');
    const timer = await app.deps.temporal!.workflow.getHandle(promiseWorkflowId(t.tenant.tenantId, promise!.id)).describe();
    expect(timer.type).toBe('promiseDeadlineWorkflow');
    expect(await auditActions(t, call.lead.debtId)).toContain('ai.promise_recorded');
    expect((await conversations(t, call.lead.debtId)).map((c) => c.source)).toEqual(['ai_verified']);

    const next = await dialAgain(t, call.lead);
    expect(next).toMatchObject({ status: 'blocked', reason: 'regf_post_contact' });
    expect(next.decision_id).toEqual(expect.any(String));
  });

  it('a dispute: the debt is disputed, audited, and no longer dialed', async () => {
    const call = await liveCall(t, { factor: 'account_last4' });
    await converse(t, call, verified(["I don't owe this", 'no']));
    const conv = await ended(t, call);
    expect(types(conv)).toContain('dispute');
    expect(await debtState(t, call.lead.debtId)).toBe('disputed');
    expect(await auditActions(t, call.lead.debtId)).toContain('ai.dispute_recorded');
    // The verified call is a conversation (refused first), and the disputed debt is refused by the policy too.
    const next = await dialAgain(t, call.lead);
    expect(next).toMatchObject({ status: 'blocked', reason: 'regf_post_contact' });
    expect(await gateOutcome(t, next.decision_id, 'tenant_policy')).toBe('block');
  });

  it('a wrong party: the number is listed wrong_number, its consents for the debt revoked, and neither dialed nor texted again', async () => {
    const call = await liveCall(t, { factor: 'account_last4' });
    await converse(t, call, ['no, wrong number']);
    const conv = await ended(t, call);
    expect(conv.outcome).toBe('wrong_party');
    const facts = await withTenant(app.deps.db, t.tenant.tenantId, async (tx) => ({
      dnc: await tx.dncEntry.findMany({ where: { phoneE164: call.lead.phone, removedAt: null } }),
      consents: await tx.consent.findMany({ where: { phoneE164: call.lead.phone, debtId: call.lead.debtId } }),
    }));
    expect(facts.dnc.map((d) => d.source)).toEqual(['wrong_number']);
    expect(facts.consents.map((c) => [c.channel, c.revokedSource]).sort()).toEqual([
      ['sms', 'wrong_number'],
      ['voice', 'wrong_number'],
    ]);
    expect(await conversations(t, call.lead.debtId)).toEqual([]);
    const next = await dialAgain(t, call.lead);
    expect(next).toMatchObject({ status: 'blocked', reason: 'consent_revoked' });
    expect(await gateOutcome(t, next.decision_id, 'dnc_listed')).toBe('block');
    const text = await app.request('POST', '/v1/sms/messages', { token: t.tenant.apiKey, body: { to: call.lead.phone, body: 'Hello. Reply STOP to opt out.', debt_id: call.lead.debtId } });
    expect(text.status).toBe(422);
    expect(text.body.error).toMatchObject({ code: 'compliance_blocked', gate: 'consent_revoked' });
  });

  it('a callback request: a pending callback on the number with its timer and audit entry', async () => {
    const call = await liveCall(t, { factor: 'account_last4' });
    await converse(t, call, verified(['not a good time, call me later']));
    const conv = await ended(t, call);
    expect(conv.outcome).toBe('callback_requested');
    const callbacks = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
      sql.query<{ id: string; contact_phone: string; status: string; scheduled_at: Date }>('SELECT id, contact_phone, status, scheduled_at FROM callbacks WHERE debt_id = $1', [call.lead.debtId]),
    );
    expect(callbacks).toHaveLength(1);
    expect(callbacks[0]).toMatchObject({ contact_phone: call.lead.phone, status: 'pending' });
    expect(callbacks[0]!.scheduled_at.getTime()).toBeGreaterThan(Date.now() + 3_600_000);
    const timer = await app.deps.temporal!.workflow.getHandle(callbackWorkflowId(t.tenant.tenantId, callbacks[0]!.id)).describe();
    expect(timer.type).toBe('callbackTimerWorkflow');
    expect(await auditActions(t, call.lead.debtId)).toContain('callback.scheduled');
  });

  it('"stop calling" is a verbal revocation: an SMS START afterwards does not lift it', async () => {
    const call = await liveCall(t, { factor: 'account_last4' });
    await converse(t, call, verified(['stop calling me']));
    await ended(t, call);
    const listed = () => withTenant(app.deps.db, t.tenant.tenantId, (tx) => tx.dncEntry.findMany({ where: { phoneE164: call.lead.phone, removedAt: null } }));
    expect((await listed()).map((d) => d.source)).toEqual(['verbal_revocation']);

    const accountId = await withTenant(app.deps.db, t.tenant.tenantId, async (tx) => (await tx.tenant.findUniqueOrThrow({ where: { id: t.tenant.tenantId } })).accountId);
    const provider = await withTenant(app.deps.db, t.tenant.tenantId, (tx) =>
      tx.smsProvider.create({
        data: { accountId, tenantId: t.tenant.tenantId, adapter: 'mock', region: 'us', name: `p-${randomUUID().slice(0, 6)}`, webhookSecretCiphertext: app.deps.box.encrypt(HMAC_SECRET), status: 'active' },
      }),
    );
    const raw = JSON.stringify({ message_id: `in-${randomUUID()}`, from: call.lead.phone, to: '+13035550100', text: 'START', timestamp: new Date().toISOString() });
    const start = await app.request('POST', `/webhooks/sms/${provider.id}/inbound`, {
      rawBody: raw,
      headers: { 'content-type': 'application/json', 'x-dd-signature': createHmac('sha256', HMAC_SECRET).update(raw).digest('hex') },
    });
    expect(start.status).toBe(200);
    await waitFor(
      async () => ((await withTenant(app.deps.db, t.tenant.tenantId, (tx) => tx.smsMessage.count({ where: { direction: 'inbound', fromE164: call.lead.phone } }))) > 0 ? true : undefined),
      10_000,
      'the inbound START',
    );
    expect((await listed()).map((d) => d.source)).toEqual(['verbal_revocation']);
    const voice = await withTenant(app.deps.db, t.tenant.tenantId, (tx) => tx.consent.findFirstOrThrow({ where: { phoneE164: call.lead.phone, channel: 'voice' } }));
    expect(voice.revokedSource).toBe('verbal_revocation');
    expect(await dialAgain(t, call.lead)).toMatchObject({ status: 'blocked', reason: 'consent_revoked' });
  });
});
