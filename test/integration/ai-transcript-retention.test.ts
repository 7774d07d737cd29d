import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withTenantSql } from '../../src/lib/tenancy';
import { createSwitchCommands } from '../../src/switch/esl';
import { recordingRetentionSweepSignal, recordingRetentionWorkflowId } from '../../workflows/recording-retention.workflow';
import { daytimePrefix, numberEnding, runWorker, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, type TestApp } from '../helpers/harness';

/**
 * The words of AI calls are kept like their recordings (docs/ai-calls.md, Transcripts and audio):
 * the recording retention sweep purges a call's transcript and the words of its `heard` timeline
 * entries at the recording's retained_until, and keeps them while the recording is under legal hold.
 */

jest.setTimeout(180_000);

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let owner: Client;
const taskQueue = `ai-transcript-retention-${randomUUID()}`;
const prefix = daytimePrefix();

beforeAll(async () => {
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

const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

it('purges the transcript and the heard words of a call whose recording expired, keeps those of a held one', async () => {
  const tenant = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
  expect((await app.request('PUT', '/v1/artificial-voice-disclosure', { token: tenant.apiKey, body: { text: 'This is an automated call from Acme Recovery.' } })).status).toBe(200);
  const agent = await app.request('POST', '/v1/ai/agents', {
    token: tenant.apiKey,
    body: { disclosure: { text: 'Hello, this is an automated assistant calling for Acme Recovery.' }, policy: { max_settlement_pct: 20, min_payment_cents: 1000, max_plan_months: 6, take_payments: 'none', prohibited: [] } },
  });
  expect((await app.request('PATCH', `/v1/ai/agents/${agent.body.ai_agent.id}`, { token: tenant.apiKey, body: { status: 'live' } })).status).toBe(200);
  const created = await app.request('POST', '/v1/campaigns', {
    token: tenant.apiKey,
    body: { name: `ai-${randomUUID()}`, campaign_type: 'ai_voice', ai_agent_id: agent.body.ai_agent.id, consult_config: {}, record_calls: true },
  });
  const campaignId: string = created.body.campaign.id;
  const serial = Math.floor(Math.random() * 90);
  await seedLeads(app, tenant, campaignId, [numberEnding(prefix, serial, 10), numberEnding(prefix, serial + 1, 11)]);
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey, body: { tick_ms: 200, batch_size: 5 } })).status).toBe(200);

  const conversations = () =>
    withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
      sql.query<{ call_uuid: string; status: string; transcript: Array<{ speaker: string; text: string }>; engine_state: unknown; transcript_purged_at: Date | null }>(
        'SELECT call_uuid, status, transcript, engine_state, transcript_purged_at FROM ai_conversations ORDER BY call_uuid',
      ),
    );
  const greeted = await waitFor(async () => {
    const rows = await conversations();
    return rows.length === 2 && rows.every((r) => r.transcript.length > 0) ? rows : undefined;
  }, 30_000, 'two greeted calls');
  for (const c of greeted) await createSwitchCommands(rig.esl).simulateSpeech(c.call_uuid, 'stop calling me at 303 555 0123');
  const recordings = await waitFor(async () => {
    const res = await app.request('GET', `/v1/recordings?campaign_id=${campaignId}`, { token: tenant.apiKey });
    return res.body.recordings?.length === 2 ? (res.body.recordings as Array<{ id: string; call_id: string }>) : undefined;
  }, 60_000, 'both recordings');
  const [expired, held] = recordings;
  expect((await app.request('PUT', `/v1/recordings/${held!.id}/legal-hold`, { token: tenant.apiKey, body: { legal_hold: true, reason: 'Matter 2026-21' } })).status).toBe(200);
  // Moved as the test superuser, the way only an operator could (the service freezes it at creation).
  await owner.query('UPDATE recordings SET retained_until = $2::date WHERE id = ANY ($1::uuid[])', [[expired!.id, held!.id], yesterday()]);

  const timeline = async (uuid: string) => (await app.request('GET', `/v1/calls/${uuid}`, { token: tenant.apiKey })).body.timeline as Array<Record<string, unknown>>;
  const heardBefore = (await timeline(expired!.call_id)).filter((e) => e.event === 'heard');
  expect(heardBefore).toEqual([expect.objectContaining({ text: 'stop calling me at *** *** 0123', confidence: null, turn: 1 })]);

  await app.deps.temporal!.workflow.getHandle(recordingRetentionWorkflowId(taskQueue)).signal(recordingRetentionSweepSignal);
  const after = await waitFor(async () => {
    const rows = await conversations();
    return rows.find((r) => r.call_uuid === expired!.call_id)?.transcript_purged_at ? rows : undefined;
  }, 30_000, 'the purge');
  const purged = after.find((r) => r.call_uuid === expired!.call_id)!;
  expect(purged).toMatchObject({ transcript: [], engine_state: null, status: 'ended' });
  const heardAfter = (await timeline(expired!.call_id)).filter((e) => e.event === 'heard');
  expect(heardAfter).toEqual([expect.objectContaining({ text_purged: true, confidence: null, turn: 1 })]);
  expect(heardAfter[0]).not.toHaveProperty('text');
  // What the AI said stays: the timeline's spoken lines are what the consumer heard, evidence.
  expect((await timeline(expired!.call_id)).some((e) => e.event === 'spoken')).toBe(true);
  const audit = await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
    sql.query<{ payload: { call_uuid: string } }>(`SELECT payload FROM audit_log WHERE action = 'ai.transcript_purged'`),
  );
  expect(audit.map((a) => a.payload.call_uuid)).toEqual([expired!.call_id]);

  const kept = after.find((r) => r.call_uuid === held!.call_id)!;
  expect(kept.transcript_purged_at).toBeNull();
  expect(kept.transcript.find((l) => l.speaker === 'consumer')!.text).toBe('stop calling me at *** *** 0123');
  expect((await timeline(held!.call_id)).filter((e) => e.event === 'heard')).toEqual([expect.objectContaining({ text: 'stop calling me at *** *** 0123' })]);
  // The timeline allows no other change than dropping a heard line's words.
  await expect(owner.query(`UPDATE call_events SET data = '{}'::jsonb WHERE event = 'heard' AND data->>'ai_conversation_id' IS NOT NULL`)).rejects.toThrow(/append-only/);
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey })).status).toBe(200);
});
