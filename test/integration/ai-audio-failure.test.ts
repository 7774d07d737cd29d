import { randomUUID } from 'node:crypto';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { withTenantSql } from '../../src/lib/tenancy';
import { speakableText } from '../../src/switch/esl';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { AI_DISCLOSURE as DISCLOSURE, provisionAiTenant, type AiTenant } from '../helpers/ai-tenant';

/**
 * An AI call the product cannot hear (docs/ai-calls.md, The audio path: failure): the switch's
 * fork cannot reach the gateway (nothing listens at AI_AUDIO_WS_URL), so mod_audio_fork reports
 * connect_failed. The AI never talks on deaf: a free person takes the call, else it names itself,
 * says goodbye and hangs up.
 */

jest.setTimeout(120_000);

const GOODBYE = 'I am sorry, I have to end this call now. Thank you for your time. Goodbye.';

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `ai-audio-failure-${randomUUID()}`;
const prefix = daytimePrefix();
let serial = Math.floor(Math.random() * 50);

beforeAll(async () => {
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  rig = await startSwitchRig({ ringMs: 100, talkMs: 60_000, promptMs: 100 });
  app = await startTestApp(
    { TEMPORAL_TASK_QUEUE: taskQueue, AI_AUDIO_WS_URL: `ws://127.0.0.1:${deadPort}/ai-audio`, AI_AUDIO_SECRET: randomUUID(), AI_AUDIO_CONNECT_TIMEOUT_MS: '3000' },
    { esl: rig.esl },
  );
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});

const aiTenant = (): Promise<AiTenant> => provisionAiTenant(app);

async function placedCall(t: { tenant: ProvisionedTenant; agentId: string }): Promise<{ campaignId: string; uuid: string; originalId: string }> {
  const created = await app.request('POST', '/v1/campaigns', {
    token: t.tenant.apiKey,
    body: { name: `ai-${randomUUID()}`, campaign_type: 'ai_voice', ai_agent_id: t.agentId, consult_config: {} },
  });
  const campaignId: string = created.body.campaign.id;
  await seedLeads(app, t.tenant, campaignId, [numberEnding(prefix, (serial += 1), 40)]);
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: t.tenant.apiKey, body: { tick_ms: 200, batch_size: 5 } })).status).toBe(200);
  const original = await waitFor(async () => {
    const res = await app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=100`, { token: t.tenant.apiKey });
    return (res.body.call_attempts as any[]).find((r) => r.corrects_id === null && r.call_uuid);
  }, 20_000, 'a placed call');
  return { campaignId, uuid: original.call_uuid, originalId: original.id };
}

async function ended(t: { tenant: ProvisionedTenant }, uuid: string): Promise<{ outcome: string; events: Array<{ type: string; reason?: string }>; transcript: Array<{ speaker: string; text: string }> }> {
  return waitFor(async () => {
    const [c] = await withTenantSql(app.deps.db, t.tenant.tenantId, (sql) =>
      sql.query<{ status: string; outcome: string; events: Array<{ type: string; reason?: string }>; transcript: Array<{ speaker: string; text: string }> }>(
        'SELECT status, outcome, events, transcript FROM ai_conversations WHERE call_uuid = $1',
        [uuid],
      ),
    );
    return c?.status === 'ended' ? c : undefined;
  }, 30_000, 'the end of the conversation');
}

async function timeline(t: { tenant: ProvisionedTenant }, uuid: string): Promise<Array<{ event: string; [k: string]: any }>> {
  return waitFor(async () => {
    const res = await app.request('GET', `/v1/calls/${uuid}`, { token: t.tenant.apiKey });
    const entries = (res.body.timeline ?? []) as Array<{ event: string }>;
    return entries.some((e) => e.event === 'hangup') ? entries : undefined;
  }, 30_000, 'the finished timeline');
}

it('with nobody free, names itself, says goodbye and hangs up: nothing of the conversation is said', async () => {
  const t = await aiTenant();
  const call = await placedCall(t);
  const conv = await ended(t, call.uuid);
  expect(conv.outcome).toBe('completed');
  expect(conv.events.at(-1)).toMatchObject({ type: 'end', reason: 'audio_unavailable' });
  const entries = await timeline(t, call.uuid);
  expect(entries.filter((e) => e.event === 'spoken').map((e) => [e.purpose, e.text])).toEqual([
    ['disclosure', speakableText(DISCLOSURE)],
    ['ai_turn', GOODBYE],
  ]);
  expect(rig.sim.spoken(call.uuid).map((s) => s.text)).toEqual([speakableText(`${DISCLOSURE} ${GOODBYE}`)]);
  expect((await app.request('POST', `/v1/campaigns/${call.campaignId}/stop`, { token: t.tenant.apiKey })).status).toBe(200);
});

it('with a seat free, hands the consumer to the person without a word from the AI', async () => {
  const t = await aiTenant();
  const [seat] = await seatAgents(app, rig, t.tenant, 1);
  const call = await placedCall(t);
  const conv = await ended(t, call.uuid);
  expect(conv.outcome).toBe('handoff');
  expect(conv.events.at(-1)).toMatchObject({ type: 'end', reason: 'audio_unavailable' });
  await waitFor(() => Promise.resolve(rig.sim.channel(call.uuid)?.bridgedTo ? true : undefined), 20_000, 'the bridge');
  expect(rig.sim.spoken(call.uuid)).toEqual([]);
  rig.sim.remoteHangup(call.uuid);
  const entries = await timeline(t, call.uuid);
  expect(entries.find((e) => e.event === 'transferred')).toMatchObject({ agent_id: seat });
  expect(entries.filter((e) => e.event === 'spoken')).toEqual([]);
  expect((await app.request('POST', `/v1/campaigns/${call.campaignId}/stop`, { token: t.tenant.apiKey })).status).toBe(200);
});
