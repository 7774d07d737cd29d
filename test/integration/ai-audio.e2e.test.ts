import { speakableText } from '../../src/switch/esl';
import { withTenantSql } from '../../src/lib/tenancy';
import { aiCallWorkflowId, promiseWorkflowId } from '../../workflows/ids';
import { seatAgents, waitFor } from '../helpers/dial-loop';
import { AI_DISCLOSURE as DISCLOSURE } from '../helpers/ai-tenant';
import { SPOKEN_WORDS, useAiAudioRig } from '../helpers/ai-audio-rig';
import { logLines } from '../helpers/log-collector';

/**
 * Voice AI on real audio, end to end (test/helpers/ai-audio-rig.ts): a conversation to a promise,
 * a consumer asking for a person, a consumer talking over the AI. Everything through the HTTP API
 * and the simulator over TCP; nothing here writes a fact's column or says a word for the consumer.
 * The calls the AI ends or hands over on its own are in ai-audio-endings.e2e.test.ts.
 */

jest.mock('pino', () => jest.requireActual<typeof import('../helpers/log-collector')>('../helpers/log-collector').collectingPino());
jest.setTimeout(300_000);

const audio = useAiAudioRig('ai-audio', {
  aiCallWorkflow: ['activity:startAudioFork', 'activity:respondAiTurn', 'signal:aiSpeech', 'activity:bridgeAiCallToHuman'],
});
const { aiTenant, dial, waitConversation, finishedTimeline, finalRow, stop, historyText } = audio;

it('40: the disclosure is spoken first, the consumer is heard, verified, offered a payment inside policy and promises; the promise lands as an agent\'s does', async () => {
  const t = await aiTenant();
  const hook = await audio.app.request('POST', '/v1/webhooks', { token: t.tenant.apiKey, body: { url: `${audio.receiverUrl}/hooks`, events: ['promise.recorded'] } });
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
  const said = audio.rig.sim.consumerSaid(call.uuid);
  expect(said.length).toBe(heard.length);

  // The promise, exactly as an agent's: the row, promise.recorded, the debt's state, its timer, the audit entry, the conversation fact.
  const [promise] = await withTenantSql(audio.app.deps.db, t.tenant.tenantId, (sql) =>
    sql.query<{ id: string; call_attempt_id: string }>('SELECT id, call_attempt_id FROM promises WHERE debt_id = $1', [call.debtId]),
  );
  expect(promise!.call_attempt_id).toBe(call.originalId);
  const outbox = await withTenantSql(audio.app.deps.db, t.tenant.tenantId, (sql) => sql.query('SELECT event FROM webhook_deliveries WHERE event_id = $1', [promise!.id]));
  expect(outbox).toEqual([{ event: 'promise.recorded' }]);
  const debt = await audio.app.request('GET', `/v1/debts/${call.debtId}`, { token: t.tenant.apiKey });
  expect(debt.body.debt.state).toBe('promise_to_pay');
  expect((await audio.app.deps.temporal!.workflow.getHandle(promiseWorkflowId(t.tenant.tenantId, promise!.id)).describe()).type).toBe('promiseDeadlineWorkflow');
  const audit = await withTenantSql(audio.app.deps.db, t.tenant.tenantId, (sql) => sql.query<{ action: string }>('SELECT action FROM audit_log WHERE subject_id = $1', [call.debtId]));
  expect(audit.map((a) => a.action)).toContain('ai.promise_recorded');
  const facts = await withTenantSql(audio.app.deps.db, t.tenant.tenantId, (sql) => sql.query('SELECT source FROM conversations WHERE debt_id = $1', [call.debtId]));
  expect(facts).toEqual([{ source: 'ai_verified' }]);

  // The words crossed Temporal sealed.
  const history = await historyText(aiCallWorkflowId(t.tenant.tenantId, call.uuid));
  expect(history).toContain('startAudioFork');
  expect(history).not.toMatch(/that is right|can do that|one two three four/);
  await stop(t, call.campaignId);
});

it('41: "talk to a real person" hands the consumer to the registered seat', async () => {
  const t = await aiTenant();
  const [seat] = await seatAgents(audio.app, audio.rig, t.tenant, 1);
  const call = await dial(t, 41, {});
  const conv = await waitConversation(t, call.uuid, (c) => c.status === 'ended', 'the handoff', 120_000);
  expect(conv.outcome).toBe('handoff');
  expect(conv.events.find((e) => e.type === 'handoff')).toMatchObject({ trigger: 'human_requested', action: 'transfer' });
  await waitFor(() => Promise.resolve(audio.rig.sim.channel(call.uuid)?.bridgedTo ? true : undefined), 30_000, 'the bridge');
  // What the consumer says to the person is not streamed to the AI.
  expect(audio.rig.sim.channel(call.uuid)!.audioForks.filter((f) => f.state === 'open')).toEqual([]);
  // With the person, the consumer talks SIM_TALK_MS (a minute here): the test ends the call.
  audio.rig.sim.remoteHangup(call.uuid);
  const final = await finalRow(t, call);
  expect(final).toMatchObject({ ai_used: true, agent_id: seat });
  const timeline = await finishedTimeline(t, call.uuid);
  expect(timeline.filter((e) => e.event === 'heard').map((e) => e.text)).toContain(conv.transcript.filter((l) => l.speaker === 'consumer').at(-1)!.text);
  expect(timeline.find((e) => e.event === 'transferred')).toMatchObject({ agent_id: seat });
  await stop(t, call.campaignId);
});

it('44: the consumer talking over the AI stops its turn (barge-in on the timeline) and is heard', async () => {
  const t = await aiTenant();
  const call = await dial(t, 44, { factor: 'account_last4' }, { account_number: 'ACCT-5500-1234' });
  const timeline = await waitFor(async () => {
    const entries = await audio.timeline(t, call.uuid);
    return entries.some((e) => e.event === 'barge_in') && entries.some((e) => e.event === 'heard') ? entries : undefined;
  }, 60_000, 'the barge-in and the utterance');
  const bargeIn = timeline.find((e) => e.event === 'barge_in')!;
  expect(bargeIn.audio_ms).toBeGreaterThan(0);
  expect(audio.rig.sim.consumerSaid(call.uuid)[0]).toMatchObject({ bargeIn: true });
  audio.rig.sim.remoteHangup(call.uuid);
  await finalRow(t, call);
  await stop(t, call.campaignId);
});

it('no log line carries what the consumer said or what the AI said', () => {
  // The capture works: the calls above were logged.
  expect(logLines.length).toBeGreaterThan(10);
  expect(logLines.filter((l) => SPOKEN_WORDS.test(l))).toEqual([]);
});
