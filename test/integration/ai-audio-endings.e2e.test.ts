import { seatAgents, waitFor } from '../helpers/dial-loop';
import { AI_GOODBYE, SPOKEN_WORDS, useAiAudioRig } from '../helpers/ai-audio-rig';
import { logLines } from '../helpers/log-collector';

/**
 * Voice AI on real audio, end to end (test/helpers/ai-audio-rig.ts): the calls the AI ends or hands
 * over on its own (the kill switch, the hard ceiling, the month's budget, a consumer it cannot make
 * out). Everything through the HTTP API and the simulator over TCP.
 */

jest.mock('pino', () => jest.requireActual<typeof import('../helpers/log-collector')>('../helpers/log-collector').collectingPino());
jest.setTimeout(300_000);

const audio = useAiAudioRig('ai-audio-endings', {
  aiCallWorkflow: ['signal:aiStop', 'activity:bridgeAiCallToHuman'],
});
const { aiTenant, dial, waitConversation, finishedTimeline, finalRow, stop } = audio;

it('the kill switch mid-call ends it with the closing message spoken', async () => {
  const t = await aiTenant();
  // 43 says nothing: the call is live, listening, when the tenant pauses its AI.
  const call = await dial(t, 43, {});
  await waitFor(() => Promise.resolve(audio.rig.sim.channel(call.uuid)?.audioForks.some((f) => f.state === 'open') ? true : undefined), 30_000, 'the fork');
  await waitFor(() => Promise.resolve(audio.rig.sim.spoken(call.uuid).length > 0 ? true : undefined), 30_000, 'the greeting');
  const paused = await audio.app.request('POST', '/v1/ai/pause', { token: t.tenant.apiKey, body: { reason: 'audio e2e' } });
  expect(paused.status).toBe(200);
  expect(paused.body.stopped_calls).toBe(1);
  const conv = await waitConversation(t, call.uuid, (c) => c.status === 'ended', 'the stop');
  expect(conv.outcome).toBe('paused');
  const final = await finalRow(t, call);
  expect(final.hangup_cause).toBe('NORMAL_CLEARING');
  const goodbye = AI_GOODBYE;
  expect(audio.rig.sim.spoken(call.uuid).at(-1)!.text).toBe(goodbye);
  const timeline = await finishedTimeline(t, call.uuid);
  const spoken = timeline.filter((e) => e.event === 'spoken');
  expect(spoken.at(-1)).toMatchObject({ purpose: 'ai_turn', text: goodbye });
  expect(timeline.findIndex((e) => e.event === 'spoken' && e.text === goodbye)).toBeLessThan(timeline.findIndex((e) => e.event === 'hangup'));
  expect((await audio.app.request('POST', '/v1/ai/resume', { token: t.tenant.apiKey })).status).toBe(200);
  await stop(t, call.campaignId);
});

it('the hard ceiling ends a live call with the closing message spoken, then hangs up ALLOTTED_TIMEOUT', async () => {
  const t = await aiTenant({ ai_max_call_seconds: 8 });
  const call = await dial(t, 43, {});
  const final = await finalRow(t, call);
  expect(final.hangup_cause).toBe('ALLOTTED_TIMEOUT');
  const goodbye = AI_GOODBYE;
  expect(audio.rig.sim.spoken(call.uuid).at(-1)!.text).toBe(goodbye);
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
  const goodbye = AI_GOODBYE;
  expect(audio.rig.sim.spoken(call.uuid).at(-1)!.text).toBe(goodbye);
  const conv = await waitConversation(t, call.uuid, (c) => c.status === 'ended', 'the end');
  expect(conv.outcome).toBe('completed');
  expect(conv.events.at(-1)).toMatchObject({ type: 'end', reason: 'budget_exhausted' });
  const talked = (Date.parse(final.ended_at) - Date.parse(final.answered_at)) / 1000;
  expect(talked).toBeGreaterThanOrEqual(14);
  expect(talked).toBeLessThan(20);
  await stop(t, call.campaignId);
});

it('48: mumbling the recognizer cannot make out is asked about twice, then handed to a person', async () => {
  const t = await aiTenant();
  const [seat] = await seatAgents(audio.app, audio.rig, t.tenant, 1);
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
  await waitFor(() => Promise.resolve(audio.rig.sim.channel(call.uuid)?.bridgedTo ? true : undefined), 30_000, 'the bridge');
  audio.rig.sim.remoteHangup(call.uuid);
  expect(await finalRow(t, call)).toMatchObject({ ai_used: true, agent_id: seat });
  await stop(t, call.campaignId);
});

it('no log line carries what the consumer said or what the AI said', () => {
  // The capture works: the calls above were logged.
  expect(logLines.length).toBeGreaterThan(10);
  expect(logLines.filter((l) => SPOKEN_WORDS.test(l))).toEqual([]);
});
