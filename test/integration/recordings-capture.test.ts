import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SwitchEvent } from '../../src/switch/simulator/protocol';
import { StorageUnavailableError } from '../../src/lib/object-store';
import { withTenant } from '../../src/lib/tenancy';
import { recordingStorageKey } from '../../src/modules/recordings/recording-capture.service';
import { DEFAULT_RECORDING_NOTICE } from '../../src/modules/call-events/call-speech.rules';
import { callSessionWorkflowId } from '../../src/contracts/call-session';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

/** Lead numbers of this file: a counter, so two calls of one tenant never dial the same number. */
let leadSerial = Math.floor(Math.random() * 50);

jest.setTimeout(120_000);

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
let spoolDir: string;
const taskQueue = `recordings-capture-${randomUUID()}`;
const events: SwitchEvent[] = [];

beforeAll(async () => {
  spoolDir = mkdtempSync(path.join(os.tmpdir(), 'dd-spool-'));
  // The consumer talks long enough for a recording of more than a second.
  rig = await startSwitchRig({ talkMs: 1500 });
  rig.sim.onEvent((ev) => events.push(ev));
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, SWITCH_RECORDINGS_DIR: spoolDir }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
  rmSync(spoolDir, { recursive: true, force: true });
});

type TimelineEntry = { at: string; event: string } & Record<string, unknown>;

/** GET /v1/calls/{call_id}'s timeline once `done` holds for it. */
async function timelineOf(tenant: ProvisionedTenant, callUuid: string, done: (t: TimelineEntry[]) => boolean): Promise<TimelineEntry[]> {
  return waitFor(
    async () => {
      const res = await app.request('GET', `/v1/calls/${callUuid}`, { token: tenant.apiKey });
      expect(res.status).toBe(200);
      return done(res.body.timeline as TimelineEntry[]) ? (res.body.timeline as TimelineEntry[]) : undefined;
    },
    20_000,
    `the timeline of ${callUuid}`,
  );
}

const header = (ev: SwitchEvent, name: string) => ev.headers.find(([k]) => k === name)?.[1];
const eventsOf = (callUuid: string, name: string) => events.filter((ev) => ev.name === name && header(ev, 'Unique-ID') === callUuid);

/** An endpoint subscribed to recording.available, written directly: the test reads the outbox. */
async function subscribe(tenant: ProvisionedTenant) {
  await withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.webhookEndpoint.create({
      data: { tenantId: tenant.tenantId, url: 'https://hooks.example.com/rec', events: ['recording.available'], secretCiphertext: app.deps.box.encrypt('whsec_test'), secretHint: 'test' },
    }),
  );
}

interface CallSetup {
  recordCalls: boolean;
  campaign?: Record<string, unknown>;
}

/**
 * A Washington DID of the tenant for the campaign's caller id pool: the call is all-party through
 * the caller's leg. A consumer placed in an all-party state would put the dial in that state's
 * quiet hours for part of every day (the dial decides with the real clock).
 */
async function washingtonCallerId(tenant: ProvisionedTenant): Promise<string> {
  const did = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.did.create({ data: { tenantId: tenant.tenantId, e164: `+1206556${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`, npa: '206', usState: 'WA' } }),
  );
  return did.id;
}

/**
 * A manual campaign, a seated agent and one human-answering lead, dialed for the agent; waits for
 * the whole call session (bridge, hangup, final row, capture) to end.
 */
async function completedCall(tenant: ProvisionedTenant, setup: CallSetup) {
  const [agentId] = await seatAgents(app, rig, tenant, 1);
  const created = await app.request('POST', '/v1/campaigns', {
    token: tenant.apiKey,
    body: { name: `rec-${randomUUID()}`, campaign_type: 'manual', record_calls: setup.recordCalls, ...setup.campaign },
  });
  expect(created.status).toBe(201);
  const campaignId: string = created.body.campaign.id;
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey })).status).toBe(200);
  const phone = numberEnding(daytimePrefix(), (leadSerial += 1), 10);
  const [debtId] = await seedLeads(app, tenant, campaignId, [phone]);
  const accountNumber = `ACC-${randomUUID().slice(0, 8)}`;
  await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.update({ where: { id: debtId }, data: { accountNumber } }));
  const dialed = await app.request('POST', `/v1/campaigns/${campaignId}/dial`, { token: tenant.apiKey, body: { debt_id: debtId, agent_id: agentId } });
  expect(dialed.status).toBe(200);
  const callId: string = dialed.body.call_id;
  // The session starts with the call's first switch event, so it may not exist yet.
  const session = app.deps.temporal!.workflow.getHandle(callSessionWorkflowId(tenant.tenantId, callId));
  await waitFor(() => session.describe().then(() => true, () => undefined), 30_000, 'the call session');
  await session.result();
  const debt = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findUniqueOrThrow({ where: { id: debtId! } }));
  return { callId, attemptId: dialed.body.call_attempt.id as string, phone, agentId: agentId!, debtId: debtId!, campaignId, accountNumber, externalRef: debt.externalRef };
}

const recordingOf = (tenant: ProvisionedTenant, callUuid: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) => tx.recording.findUnique({ where: { tenantId_callUuid: { tenantId: tenant.tenantId, callUuid } } }));

const auditOf = (tenant: ProvisionedTenant, action: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { action }, orderBy: { occurredAt: 'asc' } }));

const recordingDeliveries = (tenant: ProvisionedTenant) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) => tx.webhookDelivery.findMany({ where: { event: 'recording.available' } }));

async function storedAudio(key: string): Promise<Buffer> {
  const object = await app.deps.objectStore.get(key);
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const spoolFile = (tenant: ProvisionedTenant, callUuid: string) => path.join(spoolDir, tenant.tenantId, `${callUuid}.wav`);

/** As PostgreSQL adds months: a day the target month lacks (29 February) clamps to its last day. */
function addMonths(date: Date, months: number): string {
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months + 1, 0)).getUTCDate();
  const d = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, Math.min(date.getUTCDate(), lastDay)));
  return d.toISOString().slice(0, 10);
}

describe('call recording capture with the switch simulator', () => {
  it('records a bridged call of a recording campaign: WAV in the store, the row, recording.available, the spool emptied', async () => {
    const tenant = await provisionTenant(app);
    await subscribe(tenant);
    // A Colorado caller id and a consumer in a one-party state: no notice.
    const call = await completedCall(tenant, { recordCalls: true, campaign: { caller_ids: ['+13035550142'] } });

    const row = await recordingOf(tenant, call.callId);
    expect(row).not.toBeNull();
    expect(row).toMatchObject({
      callAttemptId: call.attemptId,
      campaignId: call.campaignId,
      debtId: call.debtId,
      agentId: call.agentId,
      phoneNumber: call.phone,
      accountRef: call.accountNumber,
      externalRef: call.externalRef,
      twoPartyConsentState: null,
      consentNoticePlayed: false,
      attestA: false,
      aiUsed: false,
      contentType: 'audio/wav',
      legalHold: false,
      audioPurgedAt: null,
    });
    const attempt = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callAttempt.findUniqueOrThrow({ where: { id: call.attemptId } }));
    expect(row!.startedAt.toISOString()).toBe(attempt.answeredAt!.toISOString());
    expect(row!.endedAt).not.toBeNull();
    expect(row!.durationSecs).toBe(Math.floor((row!.endedAt!.getTime() - row!.startedAt.getTime()) / 1000));
    expect(row!.durationSecs).toBeGreaterThanOrEqual(1);
    expect(row!.localTz).toBeTruthy();
    expect(row!.retainedUntil.toISOString().slice(0, 10)).toBe(addMonths(row!.createdAt, 36));

    // Every CDR row of the call links the recording once it is captured: the call, the attempt list, the debt's attempts.
    const uri = `/v1/recordings/${row!.id}`;
    expect((await app.request('GET', `/v1/calls/${call.callId}`, { token: tenant.apiKey })).body.call.recording_uri).toBe(uri);
    const ofCall = (list: Array<{ id: string; corrects_id: string | null; recording_uri: string | null }>) =>
      list.filter((r) => r.id === call.attemptId || r.corrects_id === call.attemptId).map((r) => r.recording_uri);
    const attempts = (await app.request('GET', '/v1/call_attempts?limit=1000', { token: tenant.apiKey })).body.call_attempts;
    expect(ofCall(attempts).length).toBeGreaterThanOrEqual(2);
    expect(new Set(ofCall(attempts))).toEqual(new Set([uri]));
    const debtAttempts = (await app.request('GET', `/v1/debts/${call.debtId}/call_attempts`, { token: tenant.apiKey })).body.call_attempts;
    expect(new Set(ofCall(debtAttempts))).toEqual(new Set([uri]));
    const packet = (await app.request('GET', `/v1/debts/${call.debtId}/defense-packet?format=json`, { token: tenant.apiKey })).body;
    expect(new Set(ofCall(packet.call_attempts))).toEqual(new Set([uri]));
    expect((await app.request('GET', `/v1/recordings/${row!.id}`, { token: tenant.apiKey })).status).toBe(200);
    expect(row!.storageKey).toBe(recordingStorageKey(tenant.tenantId, call.callId, row!.startedAt));
    expect(row!.storageKey).toMatch(new RegExp(`^recordings/${tenant.tenantId}/\\d{4}/\\d{2}/${call.callId}\\.wav$`));

    // The audio: a real WAV, exactly the bytes the row's hash and size describe.
    const audio = await storedAudio(row!.storageKey!);
    expect(audio.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(audio.subarray(8, 12).toString('ascii')).toBe('WAVE');
    expect(Number(row!.sizeBytes)).toBe(audio.length);
    expect(row!.sha256).toBe(createHash('sha256').update(audio).digest('hex'));
    expect(existsSync(spoolFile(tenant, call.callId))).toBe(false);

    // The switch recorded to the spool path and played no notice.
    const started = eventsOf(call.callId, 'RECORD_START');
    expect(started.map((ev) => header(ev, 'Record-File-Path'))).toEqual([spoolFile(tenant, call.callId)]);
    expect(eventsOf(call.callId, 'CHANNEL_EXECUTE').filter((ev) => header(ev, 'Application') === 'speak')).toEqual([]);
    expect(rig.sim.spoken(call.callId)).toEqual([]);

    // Announced once, in the Recording list item shape, with the evidence entries.
    const deliveries = await recordingDeliveries(tenant);
    expect(deliveries).toHaveLength(1);
    const envelope = JSON.parse(deliveries[0]!.body);
    expect(envelope).toMatchObject({ event: 'recording.available', event_id: row!.id, tenant_id: tenant.tenantId });
    expect(envelope.occurred_at).toBe(row!.createdAt.toISOString());
    expect(envelope.data).toMatchObject({
      id: row!.id,
      call_id: call.callId,
      started_at: row!.startedAt.toISOString(),
      account_ref: call.accountNumber,
      phone_number: call.phone,
      duration_secs: row!.durationSecs,
      two_party_consent_state: null,
      attest_a: false,
      ai_used: false,
      retained_until: row!.retainedUntil.toISOString().slice(0, 10),
      legal_hold: false,
    });
    expect(envelope.data.agent).toMatchObject({ id: call.agentId });
    expect(typeof envelope.data.disposition).toBe('string');
    const [startedAudit] = await auditOf(tenant, 'recording.started');
    expect(startedAudit).toMatchObject({ subjectType: 'call_attempt', subjectId: call.attemptId, actorType: 'workflow' });
    expect(startedAudit!.payload).toMatchObject({ call_uuid: call.callId, two_party_consent_state: null, consent_notice_played: false, applied: [] });
    const [createdAudit] = await auditOf(tenant, 'recording.created');
    expect(createdAudit).toMatchObject({ subjectType: 'recording', subjectId: row!.id });
    expect(createdAudit!.payload).toMatchObject({ sha256: row!.sha256, size_bytes: audio.length, storage_key: row!.storageKey });
  });

  it('an all-party caller (a California DID, A-attested) hears the notice before the recording starts, and the row is marked', async () => {
    const tenant = await provisionTenant(app);
    // +1 415 556: a range no other test holds active (a number is an active DID of one tenant at most).
    const e164 = `+1415556${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;
    const did = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.did.create({ data: { tenantId: tenant.tenantId, e164, npa: '415', usState: 'CA', attestation: 'A' } }),
    );
    const call = await completedCall(tenant, { recordCalls: true, campaign: { caller_id_pool: [did.id] } });

    const row = await recordingOf(tenant, call.callId);
    expect(row).toMatchObject({ twoPartyConsentState: 'CA', consentNoticePlayed: true, attestA: true });
    const audio = await storedAudio(row!.storageKey!);
    expect(row!.sha256).toBe(createHash('sha256').update(audio).digest('hex'));

    // The switch said the tenant's notice, and only once it had been said did the recording start.
    expect(rig.sim.spoken(call.callId)).toEqual([{ engine: 'flite', voice: 'kal', text: DEFAULT_RECORDING_NOTICE, at: expect.any(String) }]);
    const recordAt = events.indexOf(eventsOf(call.callId, 'RECORD_START')[0]!);
    const notice = eventsOf(call.callId, 'CHANNEL_EXECUTE').find((ev) => header(ev, 'Application') === 'speak');
    const noticeEnd = eventsOf(call.callId, 'CHANNEL_EXECUTE_COMPLETE').find((ev) => header(ev, 'Application-UUID') === header(notice!, 'Application-UUID'));
    expect(header(notice!, 'Application-Data')).toBe(`flite|kal|${DEFAULT_RECORDING_NOTICE}`);
    expect(recordAt).toBeGreaterThan(events.indexOf(noticeEnd!));

    // The timeline, the evidence: the notice spoken, then the recording started (and stopped at the hang-up).
    const timeline = await timelineOf(tenant, call.callId, (t) => t.some((e) => e.event === 'recording_stopped'));
    const order = timeline.map((e) => e.event);
    expect(timeline.filter((e) => e.event === 'spoken')).toEqual([
      expect.objectContaining({ purpose: 'consent_notice', text: DEFAULT_RECORDING_NOTICE, two_party_consent_state: 'CA' }),
    ]);
    expect(order.indexOf('spoken')).toBeLessThan(order.indexOf('recording_started'));
    expect(order.indexOf('bridged')).toBeLessThan(order.indexOf('spoken'));
    expect(Date.parse(timeline.find((e) => e.event === 'spoken')!.at)).toBeLessThan(Date.parse(timeline.find((e) => e.event === 'recording_started')!.at));

    const [startedAudit] = await auditOf(tenant, 'recording.started');
    expect(startedAudit!.payload).toMatchObject({ two_party_consent_state: 'CA', consent_notice_played: true, notice_text: DEFAULT_RECORDING_NOTICE, notice_on_recording: false });
    const applied = (startedAudit!.payload as { applied: Array<Record<string, unknown>> }).applied;
    expect(applied).toEqual(expect.arrayContaining([expect.objectContaining({ leg: 'caller', source: 'did_state', state: 'CA', rule_id: 'R1', citation: 'Cal. Penal Code 632, 632.7' })]));
  });

  it("Washington (the announcement must be on the recording): the tenant's notice before the recording, then again on it", async () => {
    const tenant = await provisionTenant(app);
    const put = await app.request('PUT', '/v1/recording-policy', {
      token: tenant.apiKey,
      body: { all_party_mode: 'notice', notice_text: "This call is recorded. It's for quality.", playback_url_ttl_seconds: 300, export_url_ttl_seconds: 3600 },
    });
    expect(put.status).toBe(200);
    const call = await completedCall(tenant, { recordCalls: true, campaign: { caller_id_pool: [await washingtonCallerId(tenant)] } });

    expect(await recordingOf(tenant, call.callId)).toMatchObject({ twoPartyConsentState: 'WA', consentNoticePlayed: true });
    const said = 'This call is recorded. It\u2019s for quality.';
    expect(rig.sim.spoken(call.callId).map((t) => t.text)).toEqual([said, said]);
    const timeline = await timelineOf(tenant, call.callId, (t) => t.some((e) => e.event === 'recording_stopped'));
    expect(timeline.filter((e) => ['spoken', 'recording_started'].includes(e.event)).map((e) => [e.event, e.on_recording ?? null])).toEqual([
      ['spoken', null],
      ['recording_started', null],
      ['spoken', true],
    ]);
    const [startedAudit] = await auditOf(tenant, 'recording.started');
    expect(startedAudit!.payload).toMatchObject({ two_party_consent_state: 'WA', notice_text: said, notice_on_recording: true });
  });

  it('policy skip: an all-party call (a Washington caller id) is not recorded, and the skip is audited', async () => {
    const tenant = await provisionTenant(app);
    await subscribe(tenant);
    const put = await app.request('PUT', '/v1/recording-policy', {
      token: tenant.apiKey,
      body: { all_party_mode: 'skip', notice_text: 'Recorded call.', playback_url_ttl_seconds: 300, export_url_ttl_seconds: 3600 },
    });
    expect(put.status).toBe(200);
    const call = await completedCall(tenant, { recordCalls: true, campaign: { caller_id_pool: [await washingtonCallerId(tenant)] } });

    expect(await recordingOf(tenant, call.callId)).toBeNull();
    expect((await app.request('GET', `/v1/calls/${call.callId}`, { token: tenant.apiKey })).body.call.recording_uri).toBeNull();
    expect(eventsOf(call.callId, 'RECORD_START')).toEqual([]);
    expect(existsSync(spoolFile(tenant, call.callId))).toBe(false);
    expect(await recordingDeliveries(tenant)).toEqual([]);
    const skipped = await auditOf(tenant, 'recording.skipped');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ subjectType: 'call_attempt', subjectId: call.attemptId });
    expect(skipped[0]!.payload).toMatchObject({ call_uuid: call.callId, two_party_consent_state: 'WA', all_party_mode: 'skip' });
    expect(await auditOf(tenant, 'recording.started')).toEqual([]);
  });

  it('a store outage delays the capture (retried) and loses nothing: the spool file stays until the put succeeds', async () => {
    const tenant = await provisionTenant(app);
    const deps = app.deps as { objectStore: TestApp['deps']['objectStore'] };
    const realStore = deps.objectStore;
    const spoolSeenOnFailure: boolean[] = [];
    deps.objectStore = Object.assign(Object.create(realStore) as TestApp['deps']['objectStore'], {
      put: (key: string, body: Parameters<typeof realStore.put>[1], options: Parameters<typeof realStore.put>[2]) => {
        if (spoolSeenOnFailure.length < 2) {
          spoolSeenOnFailure.push(existsSync(path.join(spoolDir, key.split('/')[1]!, path.basename(key))));
          (body as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
          return Promise.reject(new StorageUnavailableError('injected outage'));
        }
        return realStore.put(key, body, options);
      },
    });
    try {
      const call = await completedCall(tenant, { recordCalls: true, campaign: { caller_ids: ['+13035550142'] } });
      expect(spoolSeenOnFailure).toEqual([true, true]);
      const row = await recordingOf(tenant, call.callId);
      expect(row).not.toBeNull();
      const audio = await storedAudio(row!.storageKey!);
      expect(row!.sha256).toBe(createHash('sha256').update(audio).digest('hex'));
      expect(existsSync(spoolFile(tenant, call.callId))).toBe(false);
      expect(await auditOf(tenant, 'recording.created')).toHaveLength(1);
    } finally {
      deps.objectStore = realStore;
    }
  });

  it('record_calls = false records nothing', async () => {
    const tenant = await provisionTenant(app);
    const did = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.did.create({ data: { tenantId: tenant.tenantId, e164: `+1415556${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`, usState: 'CA', attestation: 'A' } }),
    );
    const call = await completedCall(tenant, { recordCalls: false, campaign: { caller_id_pool: [did.id] } });

    expect(await recordingOf(tenant, call.callId)).toBeNull();
    expect((await app.request('GET', `/v1/calls/${call.callId}`, { token: tenant.apiKey })).body.call.recording_uri).toBeNull();
    expect(eventsOf(call.callId, 'RECORD_START')).toEqual([]);
    expect(eventsOf(call.callId, 'CHANNEL_EXECUTE').filter((ev) => header(ev, 'Application') === 'speak')).toEqual([]);
    const entries = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { action: { startsWith: 'recording.' } } }));
    expect(entries).toEqual([]);
  });
});
