import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { withTenantSql } from '../../src/lib/tenancy';
import { speakableText } from '../../src/switch/esl';
import { aiCallWorkflowId, promiseWorkflowId } from '../../workflows/ids';
import { daytimePrefix, numberEnding, runWorker, seatAgents, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { startTestApp, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';
import { AI_DISCLOSURE as DISCLOSURE, provisionAiTenant, type AiTenant } from '../helpers/ai-tenant';

/**
 * Voice AI on real audio, end to end: an ai_voice campaign dials simulated consumers (numbers
 * ending 40-49, docs/simulated-consumer.md) who speak synthesized audio into the switch's
 * mod_audio_fork; the worker's audio gateway recognizes it (the offline PocketSphinx engine) and
 * signals the AI workflow; the rule engine answers and the switch speaks. Everything through the
 * HTTP API and the simulator over TCP; nothing here writes a fact's column or says a word for the
 * consumer.
 */

/** Every line the application logs (pino given a collecting stream), to show no words are among them. */
const logLines: string[] = [];
jest.mock('pino', () => {
  const actual = jest.requireActual('pino');
  const collect = { write: (line: string) => void logLines.push(line) };
  const wrapped = (opts: unknown) => actual(opts, collect);
  Object.assign(wrapped, actual);
  (wrapped as unknown as { default: unknown }).default = wrapped;
  return wrapped;
});

jest.setTimeout(300_000);


let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let receiver: http.Server;
const taskQueue = `ai-audio-${randomUUID()}`;
const prefix = daytimePrefix();
let serial = Math.floor(Math.random() * 50);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  receiver = http.createServer((_req, res) => res.writeHead(200).end('ok'));
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = await freePort();
  // Speech at a third of flite's pace: an AI turn takes a second or two, so a consumer can talk over it.
  rig = await startSwitchRig({ ringMs: 100, talkMs: 60_000, promptMs: 100, speechMsPerChar: 20 });
  app = await startTestApp(
    {
      TEMPORAL_TASK_QUEUE: taskQueue,
      LOG_LEVEL: 'trace',
      EGRESS_ALLOWLIST: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      AI_AUDIO_WS_PORT: String(port),
      AI_AUDIO_WS_URL: `ws://127.0.0.1:${port}/ai-audio`,
      AI_AUDIO_SECRET: randomUUID(),
    },
    { esl: rig.esl },
  );
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});
afterAll(() =>
  recordWorkflowHistories('ai-audio', [taskQueue], {
    aiCallWorkflow: ['activity:startAudioFork', 'activity:respondAiTurn', 'signal:aiSpeech', 'signal:aiStop', 'activity:bridgeAiCallToHuman'],
  }),
);


const aiTenant = (extra: Record<string, unknown> = {}): Promise<AiTenant> => provisionAiTenant(app, extra);

interface Call {
  campaignId: string;
  debtId: string;
  uuid: string;
  originalId: string;
}

/** An ai_voice campaign with one lead on a number ending `lastTwo`, started; answers its placed call. */
async function dial(t: AiTenant, lastTwo: number, consult: Record<string, unknown>, fields: Record<string, unknown> = {}): Promise<Call> {
  const created = await app.request('POST', '/v1/campaigns', {
    token: t.tenant.apiKey,
    body: { name: `ai-audio-${randomUUID()}`, campaign_type: 'ai_voice', ai_agent_id: t.agentId, consult_config: consult },
  });
  expect(created.status).toBe(201);
  const campaignId: string = created.body.campaign.id;
  const ref = `ai-audio-${randomUUID()}`;
  const imported = await app.request('POST', '/v1/debts/import', {
    token: t.tenant.apiKey,
    body: {
      debts: [
        {
          external_ref: ref,
          consumer_ref: `c-${ref}`,
          amount_cents: 10_000,
          currency: 'USD',
          campaign_id: campaignId,
          ...fields,
          contacts: [{ phone_e164: numberEnding(prefix, (serial += 1), lastTwo), is_primary: true }],
        },
      ],
    },
  });
  expect(imported.body.failed).toEqual([]);
  const found = await app.request('GET', `/v1/debts?external_ref=${encodeURIComponent(ref)}`, { token: t.tenant.apiKey });
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: t.tenant.apiKey, body: { tick_ms: 200, batch_size: 5 } })).status).toBe(200);
  const original = await waitFor(async () => (await originals(t, campaignId)).find((r) => r.corrects_id === null && r.call_uuid), 20_000, 'a placed call');
  return { campaignId, debtId: found.body.debts[0].id, uuid: original.call_uuid, originalId: original.id };
}

async function originals(t: AiTenant, campaignId: string): Promise<any[]> {
  const res = await app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: t.tenant.apiKey });
  expect(res.status).toBe(200);
  return res.body.call_attempts;
}

interface ConversationRow {
  id: string;
  status: string;
  outcome: string | null;
  transcript: Array<{ speaker: string; text: string; confidence?: number; audio_start_ms?: number; audio_end_ms?: number }>;
  events: Array<{ type: string; [k: string]: unknown }>;
}

function waitConversation(t: AiTenant, uuid: string, pred: (c: ConversationRow) => boolean, what: string, ms = 60_000): Promise<ConversationRow> {
  return waitFor(async () => {
    const [c] = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
      sql.query<ConversationRow>('SELECT id, status, outcome, transcript, events FROM ai_conversations WHERE call_uuid = $1', [uuid]),
    );
    return c && pred(c) ? c : undefined;
  }, ms, what);
}

type Entry = { at: string; event: string; [k: string]: any };

/** The call's timeline once its hangup is on it. */
function finishedTimeline(t: AiTenant, uuid: string): Promise<Entry[]> {
  return waitFor(async () => {
    const res = await app.request('GET', `/v1/calls/${uuid}`, { token: t.tenant.apiKey });
    const entries = (res.body.timeline ?? []) as Entry[];
    return entries.some((e) => e.event === 'hangup') ? entries : undefined;
  }, 60_000, 'the finished timeline');
}

function finalRow(t: AiTenant, call: Call): Promise<any> {
  return waitFor(async () => (await originals(t, call.campaignId)).find((r) => r.corrects_id === call.originalId && r.ended_at !== null), 60_000, 'the final row');
}

async function stop(t: AiTenant, campaignId: string): Promise<void> {
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: t.tenant.apiKey })).status).toBe(200);
}

/** A workflow history as the Web UI shows it, payloads decoded. */
async function historyText(id: string): Promise<string> {
  const history = await app.deps.temporal!.workflow.getHandle(id).fetchHistory();
  return JSON.stringify(history, (key, value: unknown) => (key === 'data' && typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : value));
}

it('40: the disclosure is spoken first, the consumer is heard, verified, offered a payment inside policy and promises; the promise lands as an agent\'s does', async () => {
  const t = await aiTenant();
  const hook = await app.request('POST', '/v1/webhooks', { token: t.tenant.apiKey, body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, events: ['promise.recorded'] } });
  expect(hook.status).toBe(201);
  const call = await dial(t, 40, { factor: 'account_last4' }, { account_number: 'ACCT-5500-1234' });
  const conv = await waitConversation(t, call.uuid, (c) => c.status === 'ended', 'the end of the conversation', 120_000);
  expect(conv.outcome).toBe('promise_to_pay');
  const types = conv.events.map((e) => e.type);
  expect(types).toEqual(expect.arrayContaining(['disclosure_given', 'verified', 'offer', 'promise']));
  expect(types.indexOf('verified')).toBeLessThan(types.indexOf('offer'));
  const offer = conv.events.find((e) => e.type === 'offer')!;
  // Inside the agent's policy: at most 20 % off the $100.00 balance.
  expect(offer.amount_cents as number).toBeGreaterThanOrEqual(8000);
  expect(offer.amount_cents as number).toBeLessThanOrEqual(10_000);

  // The consumer's lines carry what the recognizer said of them: confidence and audio offsets.
  const heardLines = conv.transcript.filter((l) => l.speaker === 'consumer');
  expect(heardLines.length).toBeGreaterThanOrEqual(3);
  expect(heardLines.some((l) => l.text === '1234')).toBe(true);
  for (const l of heardLines) {
    expect(l.confidence).toBeGreaterThanOrEqual(0.3);
    expect(l.audio_end_ms!).toBeGreaterThan(l.audio_start_ms!);
  }

  await finalRow(t, call);
  const timeline = await finishedTimeline(t, call.uuid);
  const firstSpoken = timeline.findIndex((e) => e.event === 'spoken');
  const firstHeard = timeline.findIndex((e) => e.event === 'heard');
  expect(timeline[firstSpoken]).toMatchObject({ purpose: 'disclosure', text: speakableText(DISCLOSURE) });
  expect(firstSpoken).toBeLessThan(firstHeard);
  const heard = timeline.filter((e) => e.event === 'heard');
  expect(heard.map((e) => e.text)).toEqual(heardLines.map((l) => l.text));
  for (const [i, e] of heard.entries()) {
    expect(e).toMatchObject({ ai_conversation_id: conv.id, confidence: heardLines[i]!.confidence, start_ms: heardLines[i]!.audio_start_ms, end_ms: heardLines[i]!.audio_end_ms });
  }
  // What the simulated consumer said is what the gateway heard, line for line.
  const said = rig.sim.consumerSaid(call.uuid);
  expect(said.length).toBe(heard.length);

  // The promise, exactly as an agent's: the row, promise.recorded, the debt's state, its timer, the audit entry, the conversation fact.
  const [promise] = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
    sql.query<{ id: string; call_attempt_id: string }>('SELECT id, call_attempt_id FROM promises WHERE debt_id = $1', [call.debtId]),
  );
  expect(promise!.call_attempt_id).toBe(call.originalId);
  const outbox = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) => sql.query('SELECT event FROM webhook_deliveries WHERE event_id = $1', [promise!.id]));
  expect(outbox).toEqual([{ event: 'promise.recorded' }]);
  const debt = await app.request('GET', `/v1/debts/${call.debtId}`, { token: t.tenant.apiKey });
  expect(debt.body.debt.state).toBe('promise_to_pay');
  expect((await app.deps.temporal!.workflow.getHandle(promiseWorkflowId(t.tenant.tenantId, promise!.id)).describe()).type).toBe('promiseDeadlineWorkflow');
  const audit = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) => sql.query<{ action: string }>('SELECT action FROM audit_log WHERE subject_id = $1', [call.debtId]));
  expect(audit.map((a) => a.action)).toContain('ai.promise_recorded');
  const facts = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) => sql.query('SELECT source FROM conversations WHERE debt_id = $1', [call.debtId]));
  expect(facts).toEqual([{ source: 'ai_verified' }]);

  // The words crossed Temporal sealed.
  const history = await historyText(aiCallWorkflowId(t.tenant.tenantId, call.uuid));
  expect(history).toContain('startAudioFork');
  expect(history).not.toMatch(/that is right|can do that|one two three four/);
  await stop(t, call.campaignId);
});

it('41: "talk to a real person" hands the consumer to the registered seat', async () => {
  const t = await aiTenant();
  const [seat] = await seatAgents(app, rig, t.tenant, 1);
  const call = await dial(t, 41, {});
  const conv = await waitConversation(t, call.uuid, (c) => c.status === 'ended', 'the handoff', 120_000);
  expect(conv.outcome).toBe('handoff');
  expect(conv.events.find((e) => e.type === 'handoff')).toMatchObject({ trigger: 'human_requested', action: 'transfer' });
  await waitFor(() => Promise.resolve(rig.sim.channel(call.uuid)?.bridgedTo ? true : undefined), 30_000, 'the bridge');
  // What the consumer says to the person is not streamed to the AI.
  expect(rig.sim.channel(call.uuid)!.audioForks.filter((f) => f.state === 'open')).toEqual([]);
  // With the person, the consumer talks SIM_TALK_MS (a minute here): the test ends the call.
  rig.sim.remoteHangup(call.uuid);
  const final = await finalRow(t, call);
  expect(final).toMatchObject({ ai_used: true, agent_id: seat });
  const timeline = await finishedTimeline(t, call.uuid);
  expect(timeline.filter((e) => e.event === 'heard').map((e) => e.text)).toContain(conv.transcript.filter((l) => l.speaker === 'consumer').at(-1)!.text);
  expect(timeline.find((e) => e.event === 'transferred')).toMatchObject({ agent_id: seat });
  await stop(t, call.campaignId);
});

it('the kill switch mid-call ends it with the closing message spoken', async () => {
  const t = await aiTenant();
  // 43 says nothing: the call is live, listening, when the tenant pauses its AI.
  const call = await dial(t, 43, {});
  await waitFor(() => Promise.resolve(rig.sim.channel(call.uuid)?.audioForks.some((f) => f.state === 'open') ? true : undefined), 30_000, 'the fork');
  await waitFor(() => Promise.resolve(rig.sim.spoken(call.uuid).length > 0 ? true : undefined), 30_000, 'the greeting');
  const paused = await app.request('POST', '/v1/ai/pause', { token: t.tenant.apiKey, body: { reason: 'audio e2e' } });
  expect(paused.status).toBe(200);
  expect(paused.body.stopped_calls).toBe(1);
  const conv = await waitConversation(t, call.uuid, (c) => c.status === 'ended', 'the stop');
  expect(conv.outcome).toBe('paused');
  const final = await finalRow(t, call);
  expect(final.hangup_cause).toBe('NORMAL_CLEARING');
  const goodbye = 'I am sorry, I have to end this call now. Thank you for your time. Goodbye.';
  expect(rig.sim.spoken(call.uuid).at(-1)!.text).toBe(goodbye);
  const timeline = await finishedTimeline(t, call.uuid);
  const spoken = timeline.filter((e) => e.event === 'spoken');
  expect(spoken.at(-1)).toMatchObject({ purpose: 'ai_turn', text: goodbye });
  expect(timeline.findIndex((e) => e.event === 'spoken' && e.text === goodbye)).toBeLessThan(timeline.findIndex((e) => e.event === 'hangup'));
  expect((await app.request('POST', '/v1/ai/resume', { token: t.tenant.apiKey })).status).toBe(200);
  await stop(t, call.campaignId);
});

it('the hard ceiling ends a live call with the closing message spoken, then hangs up ALLOTTED_TIMEOUT', async () => {
  const t = await aiTenant({ ai_max_call_seconds: 8 });
  const call = await dial(t, 43, {});
  const final = await finalRow(t, call);
  expect(final.hangup_cause).toBe('ALLOTTED_TIMEOUT');
  const goodbye = 'I am sorry, I have to end this call now. Thank you for your time. Goodbye.';
  expect(rig.sim.spoken(call.uuid).at(-1)!.text).toBe(goodbye);
  const timeline = await finishedTimeline(t, call.uuid);
  expect(timeline.filter((e) => e.event === 'spoken').at(-1)).toMatchObject({ purpose: 'ai_turn', text: goodbye });
  const conv = await waitConversation(t, call.uuid, (c) => c.status === 'ended', 'the end');
  expect(conv.outcome).toBe('max_duration');
  await stop(t, call.campaignId);
});

it('the month\'s AI budget running out mid-call ends it with the closing message spoken, inside the budget', async () => {
  // 0.04 USD at the default 0.12 USD a minute pays 20 seconds: the AI says goodbye 5 seconds before.
  const t = await aiTenant({ ai_monthly_budget_usd: 0.04, ai_max_call_seconds: 120 });
  const call = await dial(t, 43, {});
  const final = await finalRow(t, call);
  expect(final.hangup_cause).toBe('NORMAL_CLEARING');
  const goodbye = 'I am sorry, I have to end this call now. Thank you for your time. Goodbye.';
  expect(rig.sim.spoken(call.uuid).at(-1)!.text).toBe(goodbye);
  const conv = await waitConversation(t, call.uuid, (c) => c.status === 'ended', 'the end');
  expect(conv.outcome).toBe('completed');
  expect(conv.events.at(-1)).toMatchObject({ type: 'end', reason: 'budget_exhausted' });
  const talked = (Date.parse(final.ended_at) - Date.parse(final.answered_at)) / 1000;
  expect(talked).toBeGreaterThanOrEqual(14);
  expect(talked).toBeLessThan(20);
  await stop(t, call.campaignId);
});

it('44: the consumer talking over the AI stops its turn (barge-in on the timeline) and is heard', async () => {
  const t = await aiTenant();
  const call = await dial(t, 44, { factor: 'account_last4' }, { account_number: 'ACCT-5500-1234' });
  const timeline = await waitFor(async () => {
    const res = await app.request('GET', `/v1/calls/${call.uuid}`, { token: t.tenant.apiKey });
    const entries = (res.body.timeline ?? []) as Entry[];
    return entries.some((e) => e.event === 'barge_in') && entries.some((e) => e.event === 'heard') ? entries : undefined;
  }, 60_000, 'the barge-in and the utterance');
  const bargeIn = timeline.find((e) => e.event === 'barge_in')!;
  expect(bargeIn.audio_ms).toBeGreaterThan(0);
  expect(rig.sim.consumerSaid(call.uuid)[0]).toMatchObject({ bargeIn: true });
  rig.sim.remoteHangup(call.uuid);
  await finalRow(t, call);
  await stop(t, call.campaignId);
});

it('48: mumbling the recognizer cannot make out is asked about twice, then handed to a person', async () => {
  const t = await aiTenant();
  const [seat] = await seatAgents(app, rig, t.tenant, 1);
  const call = await dial(t, 48, {});
  const conv = await waitConversation(t, call.uuid, (c) => c.status === 'ended', 'the handoff', 120_000);
  expect(conv.outcome).toBe('handoff');
  expect(conv.events.filter((e) => e.type === 'asked_again').map((e) => e.count)).toEqual([1, 2]);
  expect(conv.events.find((e) => e.type === 'handoff')).toMatchObject({ trigger: 'low_confidence', action: 'transfer' });
  // Nothing it heard reached the rule engine: no identity, no verification, no offer.
  expect(conv.events.map((e) => e.type).filter((x) => ['identity_confirmed', 'verified', 'offer', 'reprompt'].includes(x))).toEqual([]);
  const heard = conv.transcript.filter((l) => l.speaker === 'consumer');
  expect(heard).toHaveLength(3);
  for (const l of heard) expect(l).toMatchObject({ low_confidence: true });
  await waitFor(() => Promise.resolve(rig.sim.channel(call.uuid)?.bridgedTo ? true : undefined), 30_000, 'the bridge');
  rig.sim.remoteHangup(call.uuid);
  expect(await finalRow(t, call)).toMatchObject({ ai_used: true, agent_id: seat });
  await stop(t, call.campaignId);
});

it('no log line carries what the consumer said or what the AI said', () => {
  // The capture works: the calls above were logged.
  expect(logLines.length).toBeGreaterThan(10);
  const words = /that is right|can do that|real person|yes please|stop calling|speaking with|automated assistant|didn.t catch that|end this call now/i;
  expect(logLines.filter((l) => words.test(l))).toEqual([]);
});
