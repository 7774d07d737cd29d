import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withTenant } from '../../src/lib/tenancy';
import { DEFAULT_RECORDING_NOTICE } from '../../src/modules/call-events/call-speech.rules';
import { inboundCallWorkflowId } from '../../src/contracts/inbound-call';
import { createSwitchCommands } from '../../src/switch/esl';
import type { SwitchEvent } from '../../src/switch/simulator';
import { campaignRunWorkflowId } from '../../workflows/ids';
import { callSessionWorkflowId } from '../../src/contracts/call-session';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';

/**
 * record_calls on every call type, end to end: campaign runs (and inbound calls) through the API,
 * the worker and its event relay, against the switch simulator over TCP. A message, a menu and
 * an AI call are recorded from the answer, before anything is said; an AI handoff or a menu's
 * transfer keeps that one recording through the agent's part.
 */

jest.setTimeout(120_000);

const IDENTITY = 'This is an automated call from Acme Recovery, a debt collector.';
const AI_DISCLOSURE = 'Hello, this is an automated assistant, a virtual agent calling on behalf of Acme Recovery.';

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let spoolDir: string;
const taskQueue = `recordings-every-call-${randomUUID()}`;
const events: SwitchEvent[] = [];
const prefix = daytimePrefix();
let serial = Math.floor(Math.random() * 50);

beforeAll(async () => {
  spoolDir = mkdtempSync(path.join(os.tmpdir(), 'dd-every-call-spool-'));
  // Consumers stay on the line until the call or the test ends it.
  rig = await startSwitchRig({ ringMs: 100, talkMs: 60_000, promptMs: 100 });
  rig.sim.onEvent((ev) => events.push(ev));
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, SWITCH_RECORDINGS_DIR: spoolDir }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await recordWorkflowHistories('recordings-every-call', [taskQueue], {
    callSessionWorkflow: ['patch:call-session-record-from-answer-20261127', 'activity:playMessage', 'activity:playMenu', 'activity:meterAiCall', 'activity:connectAgent'],
    inboundCallWorkflow: ['patch:inbound-call-ivr-campaign-recording-20261127'],
  });
  await worker?.stop();
  await app?.close();
  await rig?.close();
  rmSync(spoolDir, { recursive: true, force: true });
});

const header = (ev: SwitchEvent, name: string) => ev.headers.find(([k]) => k === name)?.[1];
const eventsOf = (uuid: string, name: string) => events.filter((ev) => ev.name === name && header(ev, 'Unique-ID') === uuid);
const speaks = (uuid: string) => eventsOf(uuid, 'CHANNEL_EXECUTE').filter((ev) => header(ev, 'Application') === 'speak');
/** Where an event is in the switch's own order of events. */
const position = (ev: SwitchEvent | undefined) => {
  expect(ev).toBeDefined();
  return events.indexOf(ev!);
};

const phone = () => numberEnding(prefix, (serial += 1), 10 + (serial % 40));

/** A tenant with the artificial-voice disclosure that automated calls need; with `ai`, the add-on and a live AI agent. */
async function tenantWith(opts: { ai?: boolean } = {}): Promise<{ tenant: ProvisionedTenant; aiAgentId: string | null }> {
  const tenant = await provisionTenant(app, opts.ai ? { tier: 'growth', voice_ai_enabled: true } : {});
  const disclosure = await app.request('PUT', '/v1/artificial-voice-disclosure', { token: tenant.apiKey, body: { text: IDENTITY } });
  expect(disclosure.status).toBe(200);
  if (!opts.ai) return { tenant, aiAgentId: null };
  const created = await app.request('POST', '/v1/ai/agents', {
    token: tenant.apiKey,
    body: { disclosure: { text: AI_DISCLOSURE }, policy: { max_settlement_pct: 20, min_payment_cents: 1000, max_plan_months: 6, take_payments: 'none', prohibited: [] } },
  });
  expect(created.status).toBe(201);
  const live = await app.request('PATCH', `/v1/ai/agents/${created.body.ai_agent.id}`, { token: tenant.apiKey, body: { status: 'live' } });
  expect(live.status).toBe(200);
  return { tenant, aiAgentId: created.body.ai_agent.id };
}

async function createCampaign(tenant: ProvisionedTenant, body: Record<string, unknown>): Promise<string> {
  const res = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `every-${randomUUID()}`, ...body } });
  expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
  return res.body.campaign.id;
}

const aiCampaign = (tenant: ProvisionedTenant, aiAgentId: string, recordCalls: boolean, extra: Record<string, unknown> = {}) =>
  createCampaign(tenant, { campaign_type: 'ai_voice', ai_agent_id: aiAgentId, consult_config: {}, record_calls: recordCalls, ...extra });

/**
 * A caller id of the tenant in an all-party state: the call is all-party through its caller's leg
 * (a consumer's own state would put the call in that state's quiet hours at some hours of the
 * day, and the dial loop decides with the real clock).
 */
async function allPartyCallerId(tenant: ProvisionedTenant, state: 'CA' | 'WA'): Promise<string> {
  const npa = state === 'CA' ? '415' : '206';
  const did = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.did.create({ data: { tenantId: tenant.tenantId, e164: `+1${npa}556${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`, npa, usState: state } }),
  );
  return did.id;
}

/** One lead of the campaign, the run started, and its call once placed. */
async function dialOne(tenant: ProvisionedTenant, campaignId: string): Promise<{ id: string; call_uuid: string }> {
  await seedLeads(app, tenant, campaignId, [phone()]);
  const started = await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey, body: { tick_ms: 200, batch_size: 5 } });
  expect(started.status).toBe(200);
  return waitFor(
    async () => {
      const res = await app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: tenant.apiKey });
      return (res.body.call_attempts as Array<{ id: string; call_uuid: string | null; corrects_id: string | null }>).find((r) => r.corrects_id === null && r.call_uuid) as
        | { id: string; call_uuid: string }
        | undefined;
    },
    20_000,
    'the placed call',
  );
}

async function stopCampaign(tenant: ProvisionedTenant, campaignId: string): Promise<void> {
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey })).status).toBe(200);
  await app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(tenant.tenantId, campaignId)).result();
}

/** Waits for the call session to end: its final row written and its recording captured. */
async function sessionDone(tenant: ProvisionedTenant, callUuid: string): Promise<void> {
  const session = app.deps.temporal!.workflow.getHandle(callSessionWorkflowId(tenant.tenantId, callUuid));
  await waitFor(() => session.describe().then(() => true, () => undefined), 30_000, 'the call session');
  await session.result();
}

const waitSpoken = (uuid: string, count: number) =>
  waitFor(() => Promise.resolve(rig.sim.spoken(uuid).length >= count ? rig.sim.spoken(uuid) : undefined), 20_000, `${count} speech(es) on ${uuid}`);

const recordingsOf = (tenant: ProvisionedTenant, callUuid: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) => tx.recording.findMany({ where: { callUuid } }));

const auditOf = (tenant: ProvisionedTenant, action: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { action }, orderBy: { occurredAt: 'asc' } }));

type TimelineEntry = { at: string; event: string } & Record<string, unknown>;

async function timelineOf(tenant: ProvisionedTenant, callUuid: string): Promise<TimelineEntry[]> {
  return waitFor(
    async () => {
      const res = await app.request('GET', `/v1/calls/${callUuid}`, { token: tenant.apiKey });
      expect(res.status).toBe(200);
      const timeline = res.body.timeline as TimelineEntry[];
      return timeline.some((e) => e.event === 'hangup') ? timeline : undefined;
    },
    20_000,
    `the timeline of ${callUuid}`,
  );
}

describe('record_calls on every call type', () => {
  it('ai_voice: recorded from the answer, before the greeting; listed, linked, held and on the timeline like any recording', async () => {
    const { tenant, aiAgentId } = await tenantWith({ ai: true });
    const campaignId = await aiCampaign(tenant, aiAgentId!, true);
    const call = await dialOne(tenant, campaignId);
    await waitSpoken(call.call_uuid, 1);
    rig.sim.remoteHangup(call.call_uuid);
    await sessionDone(tenant, call.call_uuid);

    const [row, ...more] = await recordingsOf(tenant, call.call_uuid);
    expect(more).toEqual([]);
    expect(row).toMatchObject({ callAttemptId: call.id, campaignId, agentId: null, aiUsed: true, twoPartyConsentState: null, consentNoticePlayed: false, legalHold: false });
    expect(existsSync(path.join(spoolDir, tenant.tenantId, `${call.call_uuid}.wav`))).toBe(false);
    // The switch recorded the consumer leg before it said the greeting, and said no notice.
    expect(eventsOf(call.call_uuid, 'RECORD_START').map((ev) => header(ev, 'Record-File-Path'))).toEqual([path.join(spoolDir, tenant.tenantId, `${call.call_uuid}.wav`)]);
    expect(position(eventsOf(call.call_uuid, 'CHANNEL_ANSWER')[0])).toBeLessThan(position(eventsOf(call.call_uuid, 'RECORD_START')[0]));
    expect(position(eventsOf(call.call_uuid, 'RECORD_START')[0])).toBeLessThan(position(speaks(call.call_uuid)[0]));
    expect(rig.sim.spoken(call.call_uuid)[0]!.text.startsWith(AI_DISCLOSURE)).toBe(true);

    const timeline = await timelineOf(tenant, call.call_uuid);
    const order = timeline.map((e) => e.event);
    expect(order.indexOf('answered')).toBeLessThan(order.indexOf('recording_started'));
    expect(order.indexOf('recording_started')).toBeLessThan(order.indexOf('spoken'));
    expect(order.indexOf('recording_stopped')).toBeGreaterThan(order.indexOf('spoken'));
    expect(timeline.find((e) => e.event === 'spoken')).toMatchObject({ purpose: 'disclosure' });

    const listed = await app.request('GET', `/v1/recordings?campaign_id=${campaignId}`, { token: tenant.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body.recordings).toEqual([
      expect.objectContaining({ id: row!.id, call_id: call.call_uuid, ai_used: true, agent: null, two_party_consent_state: null, legal_hold: false, retained_until: row!.retainedUntil.toISOString().slice(0, 10) }),
    ]);
    expect((await app.request('GET', `/v1/calls/${call.call_uuid}`, { token: tenant.apiKey })).body.call.recording_uri).toBe(`/v1/recordings/${row!.id}`);
    const held = await app.request('PUT', `/v1/recordings/${row!.id}/legal-hold`, { token: tenant.apiKey, body: { legal_hold: true, reason: 'Matter 2026-17' } });
    expect(held.status).toBe(200);
    expect(held.body.recording).toMatchObject({ id: row!.id, legal_hold: true });
    await stopCampaign(tenant, campaignId);
  });

  it('an AI call handed to a person: one recording from the answer through the agent part, naming the agent', async () => {
    const { tenant, aiAgentId } = await tenantWith({ ai: true });
    const [seat] = await seatAgents(app, rig, tenant, 1);
    const campaignId = await aiCampaign(tenant, aiAgentId!, true);
    const call = await dialOne(tenant, campaignId);
    await waitSpoken(call.call_uuid, 1);
    await createSwitchCommands(rig.esl).simulateSpeech(call.call_uuid, 'I want to talk to a person');
    const bridge = await waitFor(() => Promise.resolve(eventsOf(call.call_uuid, 'CHANNEL_BRIDGE')[0]), 20_000, 'the bridge to the seat');
    // The consumer's one recording is still running with the person on the line.
    expect(rig.sim.channel(call.call_uuid)!.recordings).toEqual([path.join(spoolDir, tenant.tenantId, `${call.call_uuid}.wav`)]);
    // The consumer talks with the person before hanging up: the product dates the transfer when its
    // bridge command returns, which a loaded machine reports after a hang-up sent on the switch's event.
    await waitFor(
      async () => {
        const res = await app.request('GET', `/v1/calls/${call.call_uuid}`, { token: tenant.apiKey });
        return (res.body.timeline as TimelineEntry[]).some((e) => e.event === 'transferred') ? true : undefined;
      },
      20_000,
      'the transfer on the timeline',
    );
    rig.sim.remoteHangup(call.call_uuid);
    await sessionDone(tenant, call.call_uuid);

    expect(eventsOf(call.call_uuid, 'RECORD_START')).toHaveLength(1);
    expect(eventsOf(call.call_uuid, 'RECORD_STOP')).toHaveLength(1);
    expect(position(eventsOf(call.call_uuid, 'RECORD_START')[0])).toBeLessThan(position(bridge));
    expect(position(eventsOf(call.call_uuid, 'RECORD_STOP')[0])).toBeGreaterThan(position(bridge));
    const rows = await recordingsOf(tenant, call.call_uuid);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ callAttemptId: call.id, agentId: seat, aiUsed: true });
    const timeline = await timelineOf(tenant, call.call_uuid);
    const order = timeline.map((e) => e.event);
    expect(order.indexOf('recording_started')).toBeLessThan(order.indexOf('transferred'));
    expect(order.indexOf('recording_stopped')).toBeGreaterThan(order.indexOf('transferred'));
    expect(order.filter((e) => e === 'recording_started')).toHaveLength(1);
    const listed = await app.request('GET', `/v1/recordings?agent_id=${seat}`, { token: tenant.apiKey });
    expect(listed.body.recordings).toEqual([expect.objectContaining({ id: rows[0]!.id, ai_used: true, agent: expect.objectContaining({ id: seat }) })]);
    await stopCampaign(tenant, campaignId);
  });

  it('tts_ivr: recorded from the answer, before the menu; the transfer key keeps that one recording through the agent part', async () => {
    const { tenant } = await tenantWith();
    const [seat] = await seatAgents(app, rig, tenant, 1);
    const campaignId = await createCampaign(tenant, {
      campaign_type: 'tts_ivr',
      record_calls: true,
      tts_prompt: 'Press 1 to speak with a representative.',
      ivr_menu: { '1': { action: 'transfer_agent' } },
    });
    const call = await dialOne(tenant, campaignId);
    await waitSpoken(call.call_uuid, 1);
    rig.sim.dtmf(call.call_uuid, '1');
    const bridge = await waitFor(() => Promise.resolve(eventsOf(call.call_uuid, 'CHANNEL_BRIDGE')[0]), 20_000, 'the bridge to the seat');
    rig.sim.remoteHangup(call.call_uuid);
    await sessionDone(tenant, call.call_uuid);

    expect(eventsOf(call.call_uuid, 'RECORD_START')).toHaveLength(1);
    expect(position(eventsOf(call.call_uuid, 'RECORD_START')[0])).toBeLessThan(position(speaks(call.call_uuid)[0]));
    expect(position(eventsOf(call.call_uuid, 'RECORD_STOP')[0])).toBeGreaterThan(position(bridge));
    const rows = await recordingsOf(tenant, call.call_uuid);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ callAttemptId: call.id, agentId: seat, aiUsed: false, consentNoticePlayed: false });
    expect(await auditOf(tenant, 'recording.started')).toHaveLength(1);
    await stopCampaign(tenant, campaignId);
  });

  it('survey: a menu call that ends on a key is recorded', async () => {
    const { tenant } = await tenantWith();
    const campaignId = await createCampaign(tenant, {
      campaign_type: 'survey',
      record_calls: true,
      ivr_menu: { prompt: 'Press 1 if you were satisfied.', entries: { '1': { action: 'hangup' } } },
    });
    const call = await dialOne(tenant, campaignId);
    await waitSpoken(call.call_uuid, 1);
    rig.sim.dtmf(call.call_uuid, '1');
    await sessionDone(tenant, call.call_uuid);

    expect(position(eventsOf(call.call_uuid, 'RECORD_START')[0])).toBeLessThan(position(speaks(call.call_uuid)[0]));
    const rows = await recordingsOf(tenant, call.call_uuid);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ callAttemptId: call.id, agentId: null, aiUsed: false });
    const listed = await app.request('GET', `/v1/recordings?campaign_id=${campaignId}`, { token: tenant.apiKey });
    expect(listed.body.recordings.map((r: { id: string }) => r.id)).toEqual([rows[0]!.id]);
    await stopCampaign(tenant, campaignId);
  });

  // Washington also wants the announcement on the recording: the notice is said once more as it runs.
  it.each([
    ['CA', false],
    ['WA', true],
  ] as const)(
    'an all-party call (a caller id in %s) on a message call: the identity, the notice, then the recording, then the message, and the call ends after it',
    async (state, onRecording) => {
      const { tenant } = await tenantWith();
      const message = 'We have a message about your account.';
      const campaignId = await createCampaign(tenant, {
        campaign_type: 'tts_blast',
        record_calls: true,
        tts_prompt: message,
        caller_id_pool: [await allPartyCallerId(tenant, state)],
      });
      const call = await dialOne(tenant, campaignId);
      await sessionDone(tenant, call.call_uuid);

      // The notice's ends of speech are not the message's: the message is still said, and only its end hangs up.
      const notices = onRecording ? [`${IDENTITY} ${DEFAULT_RECORDING_NOTICE}`, DEFAULT_RECORDING_NOTICE] : [`${IDENTITY} ${DEFAULT_RECORDING_NOTICE}`];
      expect(rig.sim.spoken(call.call_uuid).map((t) => t.text)).toEqual([...notices, `${IDENTITY} ${message}`]);
      const all = speaks(call.call_uuid);
      const [notice, said] = [all[0]!, all[all.length - 1]!];
      const endOf = (exec: SwitchEvent) => eventsOf(call.call_uuid, 'CHANNEL_EXECUTE_COMPLETE').find((ev) => header(ev, 'Application-UUID') === header(exec, 'Application-UUID'));
      const recordStart = eventsOf(call.call_uuid, 'RECORD_START')[0];
      expect(position(endOf(notice))).toBeLessThan(position(recordStart));
      expect(position(recordStart)).toBeLessThan(position(said));
      if (onRecording) expect(position(endOf(all[1]!))).toBeLessThan(position(said));
      const hangup = eventsOf(call.call_uuid, 'CHANNEL_HANGUP_COMPLETE')[0];
      expect(position(endOf(said))).toBeLessThan(position(hangup));
      expect(header(hangup!, 'variable_sip_hangup_disposition')).toBe('send_bye');

      const rows = await recordingsOf(tenant, call.call_uuid);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ callAttemptId: call.id, twoPartyConsentState: state, consentNoticePlayed: true, aiUsed: false });
      const timeline = await timelineOf(tenant, call.call_uuid);
      expect(timeline.filter((e) => e.event === 'spoken' || e.event === 'recording_started').map((e) => e.purpose ?? e.event)).toEqual([
        'disclosure',
        'consent_notice',
        'recording_started',
        ...(onRecording ? ['consent_notice'] : []),
        'disclosure',
        'tts_prompt',
      ]);
      const [started] = await auditOf(tenant, 'recording.started');
      expect(started!.payload).toMatchObject({
        two_party_consent_state: state,
        consent_notice_played: true,
        identity_before_notice: true,
        notice_on_recording: onRecording,
        notice_text: DEFAULT_RECORDING_NOTICE,
      });
      await stopCampaign(tenant, campaignId);
    },
  );

  it('an all-party call (a Washington caller id) on an AI call under the skip policy: not recorded, the skip audited, the AI still talks', async () => {
    const { tenant, aiAgentId } = await tenantWith({ ai: true });
    const put = await app.request('PUT', '/v1/recording-policy', {
      token: tenant.apiKey,
      body: { all_party_mode: 'skip', notice_text: 'Recorded call.', playback_url_ttl_seconds: 300, export_url_ttl_seconds: 3600 },
    });
    expect(put.status).toBe(200);
    const campaignId = await aiCampaign(tenant, aiAgentId!, true, { caller_id_pool: [await allPartyCallerId(tenant, 'WA')] });
    const call = await dialOne(tenant, campaignId);
    const spoken = await waitSpoken(call.call_uuid, 1);
    expect(spoken[0]!.text.startsWith(AI_DISCLOSURE)).toBe(true);
    rig.sim.remoteHangup(call.call_uuid);
    await sessionDone(tenant, call.call_uuid);

    expect(eventsOf(call.call_uuid, 'RECORD_START')).toEqual([]);
    expect(await recordingsOf(tenant, call.call_uuid)).toEqual([]);
    const skipped = await auditOf(tenant, 'recording.skipped');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ subjectType: 'call_attempt', subjectId: call.id });
    expect(skipped[0]!.payload).toMatchObject({ call_uuid: call.call_uuid, two_party_consent_state: 'WA', all_party_mode: 'skip' });
    await stopCampaign(tenant, campaignId);
  });

  it('record_calls off: an AI call and a menu call record nothing and say no notice, even on an all-party call', async () => {
    const { tenant, aiAgentId } = await tenantWith({ ai: true });
    const callerIds = [await allPartyCallerId(tenant, 'CA')];
    const aiId = await aiCampaign(tenant, aiAgentId!, false, { caller_id_pool: callerIds });
    const aiCall = await dialOne(tenant, aiId);
    const spoken = await waitSpoken(aiCall.call_uuid, 1);
    expect(spoken[0]!.text.startsWith(AI_DISCLOSURE)).toBe(true);
    rig.sim.remoteHangup(aiCall.call_uuid);
    await sessionDone(tenant, aiCall.call_uuid);
    await stopCampaign(tenant, aiId);

    const menuId = await createCampaign(tenant, {
      campaign_type: 'survey',
      record_calls: false,
      caller_id_pool: callerIds,
      ivr_menu: { prompt: 'Press 1 to end.', entries: { '1': { action: 'hangup' } } },
    });
    const menuCall = await dialOne(tenant, menuId);
    await waitSpoken(menuCall.call_uuid, 1);
    rig.sim.dtmf(menuCall.call_uuid, '1');
    await sessionDone(tenant, menuCall.call_uuid);
    await stopCampaign(tenant, menuId);

    for (const uuid of [aiCall.call_uuid, menuCall.call_uuid]) {
      expect(eventsOf(uuid, 'RECORD_START')).toEqual([]);
      expect(rig.sim.spoken(uuid).some((t) => t.text.includes(DEFAULT_RECORDING_NOTICE))).toBe(false);
      expect(await recordingsOf(tenant, uuid)).toEqual([]);
    }
    expect(rig.sim.spoken(menuCall.call_uuid)[0]!.text).toBe(`${IDENTITY} Press 1 to end.`);
    const entries = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { action: { startsWith: 'recording.' } } }));
    expect(entries).toEqual([]);
    expect((await app.request('GET', '/v1/recordings', { token: tenant.apiKey })).body.recordings).toEqual([]);
  });

  it("an inbound ivr route records when the campaign whose menu it runs records calls, and not when neither it nor the campaign does", async () => {
    const { tenant } = await tenantWith();
    const menu = { prompt: 'Press 9 to end.', entries: { '9': { action: 'hangup' } } };
    const recorded = await createCampaign(tenant, { campaign_type: 'survey', record_calls: true, ivr_menu: menu });
    const unrecorded = await createCampaign(tenant, { campaign_type: 'survey', record_calls: false, ivr_menu: menu });
    // New York numbers: one-party consent, no notice is due.
    const ny = () => `+1212${String(5_000_000 + Math.floor(Math.random() * 4_999_999)).padStart(7, '0')}`;
    const uuids: string[] = [];
    for (const campaignId of [recorded, unrecorded]) {
      const did = ny();
      expect((await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [did] } })).status).toBe(201);
      const route = await app.request('POST', '/v1/inbound-routes', { token: tenant.apiKey, body: { e164: did, dest_type: 'ivr', dest_ref: campaignId, recording: false } });
      expect(route.status).toBe(201);
      const uuid = rig.sim.inboundCall({ from: ny(), to: did });
      await waitSpoken(uuid, 1);
      rig.sim.dtmf(uuid, '9');
      const session = app.deps.temporal!.workflow.getHandle(inboundCallWorkflowId(tenant.tenantId, uuid));
      await waitFor(() => session.describe().then(() => true, () => undefined), 30_000, 'the inbound session');
      await session.result();
      uuids.push(uuid);
    }
    const [yes, no] = uuids as [string, string];
    expect(eventsOf(yes, 'RECORD_START')).toHaveLength(1);
    expect(position(eventsOf(yes, 'RECORD_START')[0])).toBeLessThan(position(speaks(yes)[0]));
    const rows = await recordingsOf(tenant, yes);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ campaignId: null, aiUsed: false });
    expect(eventsOf(no, 'RECORD_START')).toEqual([]);
    expect(await recordingsOf(tenant, no)).toEqual([]);
  });
});
