import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { finalizeCall } from '../../src/modules/dialer/call-session.service';
import { sellerMessage } from '../../src/modules/call-events/call-speech.rules';
import { RunnerOptionsBody } from '../../src/modules/dialer/runner-options';
import type { SwitchEvent, SwitchSimulator } from '../../src/switch/simulator';
import type { CampaignRunStats } from '../../src/contracts/campaign-run';
import { campaignRunWorkflow, runStateQuery, statsQuery, wakeSignal } from '../../workflows/campaign-run.workflow';
import { campaignRunWorkflowId } from '../../workflows/ids';
import { checkInSeat, daytimePrefix, numberEnding, registerSeat, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';

jest.setTimeout(120_000);

/** One API, one worker (with its call-event relay) and one simulator: the worker's switch link is the rig's. */
interface Env {
  rig: SwitchRig;
  app: TestApp;
  worker: RunningWorker;
  taskQueue: string;
}

interface SimTimings {
  ringMs: number;
  talkMs: number;
  promptMs: number;
  amdMs?: number;
}

async function startEnv(timings: SimTimings): Promise<Env> {
  const taskQueue = `dial-flows-${randomUUID()}`;
  const rig = await startSwitchRig(timings);
  const app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  const worker = await runWorker(app, taskQueue);
  return { rig, app, worker, taskQueue };
}

async function stopEnv(env: Env | undefined): Promise<void> {
  if (!env) return;
  await env.worker.stop();
  await env.app.close();
  await env.rig.close();
}

// Short calls for flows that end by themselves; long calls (a consumer who stays on the line) for
// flows the test drives with keys, that must outlive an agent's claim window, or that the reaper
// ends; a slow AMD verdict for the window in which an answered call waits for it.
let fast: Env;
let slow: Env;
let slowAmd: Env;

beforeAll(async () => {
  [fast, slow, slowAmd] = await Promise.all([
    startEnv({ ringMs: 100, talkMs: 400, promptMs: 100 }),
    startEnv({ ringMs: 100, talkMs: 60_000, promptMs: 100 }),
    startEnv({ ringMs: 100, talkMs: 60_000, promptMs: 100, amdMs: 1000 }),
  ]);
});
afterAll(async () => {
  await Promise.all([stopEnv(fast), stopEnv(slow), stopEnv(slowAmd)]);
});
afterAll(() => recordWorkflowHistories('campaign-run.flows', [fast, slow, slowAmd].map((e) => e.taskQueue), { campaignRunWorkflow: ['WORKFLOW_EXECUTION_CONTINUED_AS_NEW', 'CONTINUED_FROM_RUN'], callSessionWorkflow: ['activity:playMenu', 'activity:playMessage'] }));

const prefix = daytimePrefix();

function header(ev: SwitchEvent, name: string): string | undefined {
  return ev.headers.find(([k]) => k === name)?.[1];
}

/**
 * The simulator's events about one tenant's consumer legs (the legs the dial loop originates carry
 * `dd_tenant_id`), kept from the moment of creation so a test can wait for an event that has
 * already happened.
 */
class CallWatch {
  readonly events: SwitchEvent[] = [];
  private waiters: Array<{ pred: (ev: SwitchEvent) => boolean; resolve: (ev: SwitchEvent) => void }> = [];
  private readonly off: () => void;

  constructor(sim: SwitchSimulator, tenantId: string) {
    this.off = sim.onEvent((ev) => {
      if (header(ev, 'variable_dd_tenant_id') !== tenantId) return;
      this.events.push(ev);
      this.waiters = this.waiters.filter((w) => {
        if (!w.pred(ev)) return true;
        w.resolve(ev);
        return false;
      });
    });
  }

  next(pred: (ev: SwitchEvent) => boolean, what: string, timeoutMs = 20_000): Promise<SwitchEvent> {
    const seen = this.events.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      this.waiters.push({
        pred,
        resolve: (ev) => {
          clearTimeout(timer);
          resolve(ev);
        },
      });
    });
  }

  of(uuid: string, name?: string): SwitchEvent[] {
    return this.events.filter((ev) => header(ev, 'Unique-ID') === uuid && (name === undefined || ev.name === name));
  }

  /** The CHANNEL_EXECUTE of the switch speaking a text holding `words` on a leg (`speak` with the configured engine and voice). */
  speech(uuid: string, words: string, timeoutMs?: number): Promise<SwitchEvent> {
    return this.next(
      (ev) =>
        ev.name === 'CHANNEL_EXECUTE' &&
        header(ev, 'Unique-ID') === uuid &&
        header(ev, 'Application') === 'speak' &&
        (header(ev, 'Application-Data') ?? '').startsWith('flite|kal|') &&
        (header(ev, 'Application-Data') ?? '').includes(words),
      `speech of "${words}" on ${uuid}`,
      timeoutMs,
    );
  }

  close(): void {
    this.off();
  }
}

async function createCampaign(env: Env, tenant: ProvisionedTenant, body: Record<string, unknown>): Promise<string> {
  const res = await env.app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `flows-${randomUUID()}`, ...body } });
  expect(res.status).toBe(201);
  return res.body.campaign.id;
}

async function startCampaign(env: Env, tenant: ProvisionedTenant, campaignId: string, options: Record<string, unknown>): Promise<void> {
  const res = await env.app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey, body: { tick_ms: 200, batch_size: 10, ...options } });
  expect(res.status).toBe(200);
}

async function stopCampaign(env: Env, tenant: ProvisionedTenant, campaignId: string): Promise<void> {
  const res = await env.app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey });
  expect(res.status).toBe(200);
  await env.app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(tenant.tenantId, campaignId)).result();
}

/** The campaign's CDR: original rows, and per original its correction rows (newest first) and latest final row. */
async function cdr(env: Env, tenant: ProvisionedTenant, campaignId: string) {
  const res = await env.app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: tenant.apiKey });
  expect(res.status).toBe(200);
  const rows: any[] = res.body.call_attempts;
  const originals = rows.filter((r) => r.corrects_id === null);
  const corrections = (id: string) => rows.filter((r) => r.corrects_id === id);
  return {
    originals,
    byPhone: (phone: string) => originals.find((o) => o.to_number === phone),
    corrections,
    finalOf: (id: string) => corrections(id).find((r) => r.ended_at !== null),
  };
}

/** The first call placed (the CDR lists newest first). */
function earliest(originals: any[]): any {
  return [...originals].filter((o) => o.call_uuid).sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at))[0];
}

/** The original row of the call placed to `phone`, once it has been sent to the switch. */
function placedCall(env: Env, tenant: ProvisionedTenant, campaignId: string, phone: string): Promise<any> {
  return waitFor(
    async () => {
      const original = (await cdr(env, tenant, campaignId)).byPhone(phone);
      return original?.call_uuid ? original : undefined;
    },
    20_000,
    `a call to ${phone}`,
  );
}

function finalRow(env: Env, tenant: ProvisionedTenant, campaignId: string, originalId: string, timeoutMs = 20_000): Promise<any> {
  return waitFor(async () => (await cdr(env, tenant, campaignId)).finalOf(originalId), timeoutMs, `the final row of ${originalId}`);
}

async function stats(env: Env, tenant: ProvisionedTenant, campaignId: string): Promise<CampaignRunStats & Record<string, any>> {
  const res = await env.app.request('GET', `/v1/campaigns/${campaignId}/stats`, { token: tenant.apiKey });
  expect(res.status).toBe(200);
  return res.body.stats;
}

function runState(env: Env, tenant: ProvisionedTenant, campaignId: string) {
  return env.app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(tenant.tenantId, campaignId)).query(runStateQuery);
}

/**
 * Waits until the run has done `count` more ticks than now, waking it before each (an idle run
 * ticks only when something can give it work): a stretch of real decisions, not a sleep.
 */
async function ticksPass(env: Env, tenant: ProvisionedTenant, campaignId: string, count: number): Promise<void> {
  const handle = env.app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(tenant.tenantId, campaignId));
  for (let i = 0; i < count; i += 1) {
    const from = (await handle.query(runStateQuery)).tick;
    await handle.signal(wakeSignal);
    await waitFor(async () => ((await handle.query(runStateQuery)).tick > from ? true : undefined), 20_000, `tick ${i + 1} of ${count}`);
  }
}

/** The consumer legs of the tenant still up on a long-talk simulator are hung up so no test leaves a call behind. */
function hangUpLeftovers(env: Env, watch: CallWatch): void {
  const uuids = new Set(watch.events.map((ev) => header(ev, 'Unique-ID')!));
  for (const ch of env.rig.sim.channels()) if (uuids.has(ch.uuid)) env.rig.sim.remoteHangup(ch.uuid);
}

const DISCLOSURE = 'This is an automated call from Acme Recovery, a debt collector.';

/** The stored artificial-voice disclosure that messages and menus (artificial voice) need to pass the engine. */
async function disclose(env: Env, tenant: ProvisionedTenant): Promise<void> {
  const res = await env.app.request('PUT', '/v1/artificial-voice-disclosure', { token: tenant.apiKey, body: { text: DISCLOSURE } });
  expect(res.status).toBe(200);
}

type TimelineEntry = { at: string; event: string } & Record<string, unknown>;

/** GET /v1/calls/{call_id}'s timeline once `done` holds for it (the relay writes as the switch reports). */
async function timelineOf(env: Env, tenant: ProvisionedTenant, callUuid: string, done: (t: TimelineEntry[]) => boolean): Promise<TimelineEntry[]> {
  return waitFor(
    async () => {
      const res = await env.app.request('GET', `/v1/calls/${callUuid}`, { token: tenant.apiKey });
      expect(res.status).toBe(200);
      const timeline = res.body.timeline as TimelineEntry[];
      return done(timeline) ? timeline : undefined;
    },
    20_000,
    `the timeline of ${callUuid}`,
  );
}

async function debtWithoutConsent(env: Env, tenant: ProvisionedTenant, campaignId: string, phone: string): Promise<string> {
  return withTenant(env.app.deps.db, tenant.tenantId, async (tx) => {
    const debt = await tx.debt.create({
      data: { tenantId: tenant.tenantId, campaignId, externalRef: `nc-${randomUUID()}`, consumerRef: 'no-consent', amountCents: 5_000n },
    });
    await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, isPrimary: true } });
    return debt.id;
  });
}

describe('call flows of a campaign run against the switch simulator', () => {
  it('survey: walks a nested menu by keys, records every key, counts them, and honours the opt-out digit', async () => {
    const env = slow;
    const tenant = await provisionTenant(env.app);
    await disclose(env, tenant);
    const watch = new CallWatch(env.rig.sim, tenant.tenantId);
    try {
      const campaignId = await createCampaign(env, tenant, {
        campaign_type: 'survey',
        optout_digit: '8',
        ivr_menu: {
          prompt: 'Press 1 to rate your last call, 2 to end, 9 to stop our calls.',
          entries: {
            '1': { submenu: { prompt: 'How satisfied were you? Press 1 to 3.', entries: { '1': { action: 'hangup' }, '2': { action: 'hangup' }, '3': { action: 'hangup' } } } },
            '2': { action: 'hangup' },
            '9': { action: 'optout' },
          },
        },
      });
      const surveyPhone = numberEnding(prefix, 1, 11);
      const optoutPhone = numberEnding(prefix, 2, 12);
      const [, optoutDebt] = await seedLeads(env.app, tenant, campaignId, [surveyPhone, optoutPhone]);
      await startCampaign(env, tenant, campaignId, {});

      // The consumer answers, hears the root prompt, presses 1, hears the submenu, presses 3.
      const survey = await placedCall(env, tenant, campaignId, surveyPhone);
      await watch.speech(survey.call_uuid, 'Press 1 to rate your last call, 2 to end, 9 to stop our calls.');
      env.rig.sim.dtmf(survey.call_uuid, '1');
      await watch.speech(survey.call_uuid, 'How satisfied were you? Press 1 to 3.');
      env.rig.sim.dtmf(survey.call_uuid, '3');
      const surveyFinal = await finalRow(env, tenant, campaignId, survey.id);
      expect(surveyFinal).toMatchObject({ disposition: 'answered_human', hangup_cause: 'NORMAL_CLEARING', amd_verdict: null, agent_id: null });
      // The menu's hangup action ended it, not the consumer (who would have stayed 60 s).
      expect(watch.of(survey.call_uuid, 'CHANNEL_HANGUP_COMPLETE').map((ev) => header(ev, 'variable_sip_hangup_disposition'))).toEqual(['send_bye']);

      const presses = (uuid: string) =>
        withTenant(env.app.deps.db, tenant.tenantId, (tx) =>
          tx.callKeypress.findMany({ where: { callUuid: uuid }, orderBy: { seq: 'asc' }, select: { seq: true, digit: true, menuPath: true, action: true, callAttemptId: true, campaignId: true } }),
        );
      expect(await presses(survey.call_uuid)).toEqual([
        { seq: 0, digit: '1', menuPath: '', action: 'submenu', callAttemptId: survey.id, campaignId },
        { seq: 1, digit: '3', menuPath: '1', action: 'hangup', callAttemptId: survey.id, campaignId },
      ]);

      // The second consumer presses the opt-out digit at the root prompt.
      const optout = await placedCall(env, tenant, campaignId, optoutPhone);
      await watch.speech(optout.call_uuid, 'Press 1 to rate your last call, 2 to end, 9 to stop our calls.');
      env.rig.sim.dtmf(optout.call_uuid, '8');
      const optoutFinal = await finalRow(env, tenant, campaignId, optout.id);
      expect(optoutFinal).toMatchObject({ disposition: 'answered_human', hangup_cause: 'NORMAL_CLEARING' });
      expect(watch.of(optout.call_uuid, 'CHANNEL_HANGUP_COMPLETE').map((ev) => header(ev, 'variable_sip_hangup_disposition'))).toEqual(['send_bye']);
      expect(await presses(optout.call_uuid)).toEqual([{ seq: 0, digit: '8', menuPath: '', action: 'optout', callAttemptId: optout.id, campaignId }]);

      const listed = await withTenant(env.app.deps.db, tenant.tenantId, async (tx) => ({
        dnc: await tx.dncEntry.findMany({ where: { phoneE164: optoutPhone } }),
        consents: await tx.consent.findMany({ where: { phoneE164: optoutPhone } }),
        audit: await tx.auditLog.findMany({ where: { action: 'dnc.opted_out' } }),
        otherConsent: await tx.consent.findMany({ where: { phoneE164: surveyPhone } }),
      }));
      expect(listed.dnc).toEqual([expect.objectContaining({ source: 'optout_digit', removedAt: null })]);
      expect(listed.consents).toEqual([expect.objectContaining({ channel: 'voice', revokedSource: 'optout_digit', revokedAt: expect.any(Date) })]);
      expect(listed.otherConsent).toEqual([expect.objectContaining({ revokedAt: null })]);
      expect(listed.audit).toEqual([
        expect.objectContaining({ subjectType: 'debt', subjectId: optoutDebt, payload: expect.objectContaining({ source: 'optout_digit', call_attempt_id: optout.id, listed: true, consents_revoked: 1 }) }),
      ]);

      const results = await env.app.request('GET', `/v1/campaigns/${campaignId}/survey-results`, { token: tenant.apiKey });
      expect(results.status).toBe(200);
      expect(results.body).toMatchObject({ calls_answered: 2, calls_with_keypress: 2, keypresses: 3, optouts: 1 });
      expect(results.body.menus).toEqual([
        { menu_path: '', presses: 2, calls: 2, digits: { '1': 1, '8': 1 }, actions: { submenu: 1, optout: 1 }, unmatched: 0 },
        { menu_path: '1', presses: 1, calls: 1, digits: { '3': 1 }, actions: { hangup: 1 }, unmatched: 0 },
      ]);

      // A callback on the opted-out number bypasses the lead order and the number's cool-down, so it
      // reaches the compliance engine: the next tick must refuse it and place nothing.
      await withTenant(env.app.deps.db, tenant.tenantId, (tx) =>
        tx.callback.create({ data: { tenantId: tenant.tenantId, debtId: optoutDebt!, contactPhone: optoutPhone, campaignId, scheduledAt: new Date(Date.now() - 60_000) } }),
      );
      // Written directly, the callback has no timer: the run is woken as its timer would wake it.
      await env.app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(tenant.tenantId, campaignId)).signal(wakeSignal);
      const refusal = await waitFor(
        () => withTenant(env.app.deps.db, tenant.tenantId, async (tx) => (await tx.complianceRefusal.findFirst({ where: { debtId: optoutDebt! } })) ?? undefined),
        20_000,
        'the refusal of the opted-out number',
      );
      expect(['consent_revoked', 'dnc_listed']).toContain(refusal.gate);
      // The run counts the refusal once the tick that made it has returned (and placed what it would).
      await waitFor(async () => ((await stats(env, tenant, campaignId))?.blocked >= 1 ? true : undefined), 20_000, 'the refusal counted');
      const after = await cdr(env, tenant, campaignId);
      expect(after.originals.filter((o) => o.to_number === optoutPhone)).toHaveLength(1);

      await stopCampaign(env, tenant, campaignId);
    } finally {
      hangUpLeftovers(env, watch);
      watch.close();
    }
  });

  it('IVR transfer: a consumer who asks for an agent late in the call gets the 2 s window from the request, not from the answer', async () => {
    const env = slow;
    const tenant = await provisionTenant(env.app);
    await disclose(env, tenant);
    const watch = new CallWatch(env.rig.sim, tenant.tenantId);
    try {
      const [agentId] = await seatAgents(env.app, env.rig, tenant, 1);
      const campaignId = await createCampaign(env, tenant, {
        campaign_type: 'tts_ivr',
        tts_prompt: 'This is an automated call from Acme Recovery. Press 1 to speak with a representative.',
        ivr_menu: { '1': { action: 'transfer_agent' } },
      });
      const phone = numberEnding(prefix, 27, 13);
      await seedLeads(env.app, tenant, campaignId, [phone]);
      await startCampaign(env, tenant, campaignId, {});
      const call = await placedCall(env, tenant, campaignId, phone);
      const answered = await watch.next((ev) => ev.name === 'CHANNEL_ANSWER' && header(ev, 'Unique-ID') === call.call_uuid, 'the answer');
      await watch.speech(call.call_uuid, 'Press 1 to speak with a representative.');
      // The agent is on another call when the consumer asks for one.
      await withTenant(env.app.deps.db, tenant.tenantId, (tx) => tx.agent.update({ where: { id: agentId! }, data: { presence: 'on_call' } }));

      // The consumer listens past the answer's 2 s window before pressing: only time passing makes that so.
      const answeredAtMs = Number(header(answered, 'Event-Date-Timestamp')) / 1000;
      await new Promise((r) => setTimeout(r, Math.max(0, answeredAtMs + 2500 - Date.now())));
      env.rig.sim.dtmf(call.call_uuid, '1');
      await waitFor(
        () => withTenant(env.app.deps.db, tenant.tenantId, async (tx) => (await tx.callKeypress.findFirst({ where: { callUuid: call.call_uuid, action: 'transfer_agent' } })) ?? undefined),
        10_000,
        'the transfer key recorded',
      );
      // The agent frees up within the request's window: the consumer must still be waiting for it,
      // not have been sent the abandonment message.
      const abandonedAtOnce = await watch.speech(call.call_uuid, sellerMessage(null, null), 800).then(
        () => true,
        () => false,
      );
      expect(abandonedAtOnce).toBe(false);
      await withTenant(env.app.deps.db, tenant.tenantId, (tx) => tx.agent.update({ where: { id: agentId! }, data: { presence: 'available' } }));
      await watch.next((ev) => ev.name === 'CHANNEL_BRIDGE' && header(ev, 'Unique-ID') === call.call_uuid, 'the consumer bridged to the agent', 5_000);

      await stopCampaign(env, tenant, campaignId);
      env.rig.sim.remoteHangup(call.call_uuid);
      expect(await finalRow(env, tenant, campaignId, call.id)).toMatchObject({ disposition: 'answered_human', agent_id: agentId });
      // The timeline: the key, then the transfer to the agent, then the bridge.
      const timeline = await timelineOf(env, tenant, call.call_uuid, (t) => t.some((e) => e.event === 'hangup'));
      const order = timeline.map((e) => e.event);
      expect(timeline.filter((e) => e.event === 'transferred')).toEqual([expect.objectContaining({ from: 'menu', agent_id: agentId })]);
      expect(order.indexOf('digit')).toBeLessThan(order.indexOf('transferred'));
      expect(order.indexOf('transferred')).toBeLessThan(order.indexOf('bridged'));
    } finally {
      hangUpLeftovers(env, watch);
      watch.close();
    }
  });

  it('tts_blast: a person hears the message and the call ends after it; a machine is hung up as machine', async () => {
    const env = slow;
    const tenant = await provisionTenant(env.app);
    await disclose(env, tenant);
    const watch = new CallWatch(env.rig.sim, tenant.tenantId);
    try {
      const campaignId = await createCampaign(env, tenant, { campaign_type: 'tts_blast', tts_prompt: 'This is Acme Recovery with a message about your account.' });
      const humanPhone = numberEnding(prefix, 3, 21);
      const machinePhone = numberEnding(prefix, 4, 64);
      await seedLeads(env.app, tenant, campaignId, [humanPhone, machinePhone]);
      await startCampaign(env, tenant, campaignId, {});

      const human = await placedCall(env, tenant, campaignId, humanPhone);
      const machine = await placedCall(env, tenant, campaignId, machinePhone);
      const [humanFinal, machineFinal] = await Promise.all([finalRow(env, tenant, campaignId, human.id), finalRow(env, tenant, campaignId, machine.id)]);

      expect(humanFinal).toMatchObject({ disposition: 'answered_human', amd_verdict: 'HUMAN', hangup_cause: 'NORMAL_CLEARING' });
      // One utterance: the stored disclosure, then the campaign's tts_prompt.
      const played = await watch.speech(human.call_uuid, `${DISCLOSURE} This is Acme Recovery with a message about your account.`);
      const done = watch.of(human.call_uuid, 'CHANNEL_EXECUTE_COMPLETE').find((ev) => header(ev, 'Application-UUID') === header(played, 'Application-UUID'));
      expect(done).toBeDefined();
      expect(env.rig.sim.spoken(human.call_uuid)).toEqual([
        { engine: 'flite', voice: 'kal', text: `${DISCLOSURE} This is Acme Recovery with a message about your account.`, at: expect.any(String) },
      ]);
      const timeline = await timelineOf(env, tenant, human.call_uuid, (t) => t.some((e) => e.event === 'hangup'));
      expect(timeline.filter((e) => e.event === 'spoken')).toEqual([
        expect.objectContaining({ purpose: 'disclosure', text: DISCLOSURE, engine: 'flite', voice: 'kal' }),
        expect.objectContaining({ purpose: 'tts_prompt', text: 'This is Acme Recovery with a message about your account.' }),
      ]);
      expect(timeline.map((e) => e.event)).toEqual(['originate', 'ringing', 'answered', 'amd', 'spoken', 'spoken', 'hangup']);
      expect(timeline.find((e) => e.event === 'amd')).toMatchObject({ verdict: 'HUMAN' });
      expect(timeline.find((e) => e.event === 'hangup')).toMatchObject({ cause: 'NORMAL_CLEARING' });

      // The defense packet of the debt carries that timeline, sealed with the other parts.
      const packet = await env.app.request('GET', `/v1/debts/${human.debt_id}/defense-packet`, { token: tenant.apiKey });
      expect(packet.status).toBe(200);
      expect(packet.body.timelines).toEqual([{ call_attempt_id: human.id, call_uuid: human.call_uuid, timeline }]);
      expect(packet.body.manifest.files.map((f: { name: string }) => f.name)).toContain('timelines.json');
      // Hung up by the dialer once the message ended: the consumer would have stayed 60 s.
      const [hangup] = watch.of(human.call_uuid, 'CHANNEL_HANGUP_COMPLETE');
      expect(header(hangup!, 'variable_sip_hangup_disposition')).toBe('send_bye');
      expect(watch.events.indexOf(hangup!)).toBeGreaterThan(watch.events.indexOf(done!));

      expect(machineFinal).toMatchObject({ disposition: 'machine', amd_verdict: 'MACHINE', agent_id: null });
      expect(watch.of(machine.call_uuid, 'CHANNEL_EXECUTE').filter((ev) => header(ev, 'Application') === 'speak')).toEqual([]);
      expect(env.rig.sim.spoken(machine.call_uuid)).toEqual([]);
      expect(header(watch.of(machine.call_uuid, 'CHANNEL_HANGUP_COMPLETE')[0]!, 'variable_sip_hangup_disposition')).toBe('send_bye');

      await stopCampaign(env, tenant, campaignId);
    } finally {
      hangUpLeftovers(env, watch);
      watch.close();
    }
  });

  it('predictive with the seller identification set: over-dials, abandons the call no agent takes within 2 s, plays the message', async () => {
    const env = slow;
    const tenant = await provisionTenant(env.app);
    const patched = await env.app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, {
      token: ADMIN_TOKEN,
      body: { abandon_seller_name: 'Acme Recovery', abandon_seller_phone: '+13035550100' },
    });
    expect(patched.status).toBe(200);
    const watch = new CallWatch(env.rig.sim, tenant.tenantId);
    try {
      const [agentId] = await seatAgents(env.app, env.rig, tenant, 1);
      const campaignId = await createCampaign(env, tenant, { campaign_type: 'predictive', min_dial_ratio: 2, max_dial_ratio: 2 });
      const phones = [numberEnding(prefix, 5, 31), numberEnding(prefix, 6, 32)];
      await seedLeads(env.app, tenant, campaignId, phones);
      await startCampaign(env, tenant, campaignId, {});

      const abandoned = await waitFor(
        async () => {
          const c = await cdr(env, tenant, campaignId);
          const o = c.originals.find((x) => c.finalOf(x.id)?.disposition === 'abandoned');
          return o ? { original: o, final: c.finalOf(o.id) } : undefined;
        },
        20_000,
        'an abandoned call',
      );
      expect(abandoned.final).toMatchObject({ disposition: 'abandoned', agent_id: null, hangup_cause: 'NORMAL_CLEARING' });
      expect(abandoned.original.answered_at).not.toBeNull();
      const played = await watch.speech(abandoned.original.call_uuid, 'This call was placed on behalf of Acme Recovery. To reach us, or to ask not to be called again, call 3 0 3, 5 5 5, 0 1 0 0.');
      // The timeline holds it as the seller message (47 CFR 64.1200(a)(7)), naming the seller and the number.
      const timeline = await timelineOf(env, tenant, abandoned.original.call_uuid, (t) => t.some((e) => e.event === 'hangup'));
      expect(timeline.filter((e) => e.event === 'spoken')).toEqual([
        expect.objectContaining({ purpose: 'seller_message', text: sellerMessage('Acme Recovery', '+13035550100'), seller_name: 'Acme Recovery', seller_phone: '+13035550100' }),
      ]);
      expect(timeline.some((e) => e.event === 'bridged')).toBe(false);
      expect(timeline.map((e) => e.event).slice(-2)).toEqual(['spoken', 'hangup']);
      // The dialer ended it after the message; the consumer would have stayed 60 s.
      expect(header(watch.of(abandoned.original.call_uuid, 'CHANNEL_HANGUP_COMPLETE')[0]!, 'variable_sip_hangup_disposition')).toBe('send_bye');
      // The consumer got the whole 2 s window for an agent, and the message came right after it
      // (the second bound leaves room for scheduling, not for a silent line).
      const answeredUs = Number(header(watch.of(abandoned.original.call_uuid, 'CHANNEL_ANSWER')[0]!, 'Event-Date-Timestamp'));
      const waitedMs = (Number(header(played, 'Event-Date-Timestamp')) - answeredUs) / 1000;
      expect(waitedMs).toBeGreaterThanOrEqual(1990);
      expect(waitedMs).toBeLessThan(3000);

      // The other call has the agent.
      const c = await cdr(env, tenant, campaignId);
      expect(c.originals).toHaveLength(2);
      const connected = c.originals.find((o) => o.id !== abandoned.original.id)!;
      await watch.next((ev) => ev.name === 'CHANNEL_BRIDGE' && header(ev, 'Unique-ID') === connected.call_uuid, 'the bridge of the connected call');

      const s = await waitFor(async () => {
        const st = await stats(env, tenant, campaignId);
        return st && st.pacing.abandoned >= 1 ? st : undefined;
      });
      expect(s.pacing.abandoned).toBe(1);

      await stopCampaign(env, tenant, campaignId);
      env.rig.sim.remoteHangup(connected.call_uuid);
      expect(await finalRow(env, tenant, campaignId, connected.id)).toMatchObject({ disposition: 'answered_human', agent_id: agentId });
    } finally {
      hangUpLeftovers(env, watch);
      watch.close();
    }
  });

  it('predictive without the seller identification: never more calls unconnected than available agents', async () => {
    const env = slow;
    const tenant = await provisionTenant(env.app);
    const watch = new CallWatch(env.rig.sim, tenant.tenantId);
    // Consumer legs up and not bridged to an agent: each one may need the one agent.
    const waiting = new Set<string>();
    let mostWaiting = 0;
    const off = env.rig.sim.onEvent((ev) => {
      if (header(ev, 'variable_dd_tenant_id') !== tenant.tenantId) return;
      const uuid = header(ev, 'Unique-ID')!;
      if (ev.name === 'CHANNEL_CREATE') waiting.add(uuid);
      if (ev.name === 'CHANNEL_BRIDGE' || ev.name === 'CHANNEL_HANGUP') waiting.delete(uuid);
      mostWaiting = Math.max(mostWaiting, waiting.size);
    });
    try {
      const [agentId] = await seatAgents(env.app, env.rig, tenant, 1);
      const campaignId = await createCampaign(env, tenant, { campaign_type: 'predictive', min_dial_ratio: 2, max_dial_ratio: 3 });
      await seedLeads(env.app, tenant, campaignId, [numberEnding(prefix, 7, 41), numberEnding(prefix, 8, 42), numberEnding(prefix, 9, 43)]);
      await startCampaign(env, tenant, campaignId, {});

      const first = await waitFor(async () => earliest((await cdr(env, tenant, campaignId)).originals), 20_000, 'the first call');
      await watch.next((ev) => ev.name === 'CHANNEL_BRIDGE' && header(ev, 'Unique-ID') === first.call_uuid, 'the first call bridged');
      await ticksPass(env, tenant, campaignId, 2);
      expect((await cdr(env, tenant, campaignId)).originals).toHaveLength(1);
      expect(mostWaiting).toBe(1);
      expect((await stats(env, tenant, campaignId)).pacing.abandoned).toBe(0);

      await stopCampaign(env, tenant, campaignId);
      env.rig.sim.remoteHangup(first.call_uuid);
      expect(await finalRow(env, tenant, campaignId, first.id)).toMatchObject({ disposition: 'answered_human', agent_id: agentId });
    } finally {
      off();
      hangUpLeftovers(env, watch);
      watch.close();
    }
  });

  it('reaper: a call still up after call_ttl_ms gets a reaped row, is hung up on the switch, and frees its agent for the next call', async () => {
    const env = slow;
    const tenant = await provisionTenant(env.app);
    const watch = new CallWatch(env.rig.sim, tenant.tenantId);
    try {
      const [agentId] = await seatAgents(env.app, env.rig, tenant, 1);
      const campaignId = await createCampaign(env, tenant, { campaign_type: 'progressive' });
      const [firstPhone, nextPhone] = [numberEnding(prefix, 10, 51), numberEnding(prefix, 21, 52)];
      await seedLeads(env.app, tenant, campaignId, [firstPhone, nextPhone]);
      await startCampaign(env, tenant, campaignId, { call_ttl_ms: 1500 });

      const call = await placedCall(env, tenant, campaignId, firstPhone);
      const bridge = await watch.next((ev) => ev.name === 'CHANNEL_BRIDGE' && header(ev, 'Unique-ID') === call.call_uuid, 'the call bridged to the agent');
      const agentLeg = header(bridge, 'Bridge-B-Unique-ID');
      expect(agentLeg).toBeTruthy();
      // One agent, one line: the next lead waits for the agent.
      expect((await cdr(env, tenant, campaignId)).originals).toHaveLength(1);

      const reaped = await waitFor(
        async () => (await cdr(env, tenant, campaignId)).corrections(call.id).find((r) => r.disposition === 'reaped'),
        20_000,
        'the reaped row',
      );
      expect(reaped).toMatchObject({ hangup_cause: 'ALLOTTED_TIMEOUT', ended_at: expect.any(String) });
      expect(Date.parse(reaped.ended_at) - Date.parse(call.started_at)).toBeGreaterThanOrEqual(1500);
      const hangup = await watch.next((ev) => ev.name === 'CHANNEL_HANGUP_COMPLETE' && header(ev, 'Unique-ID') === call.call_uuid, 'the reaped call hung up');
      expect(header(hangup, 'Hangup-Cause')).toBe('ALLOTTED_TIMEOUT');
      // The simulator ends the bridged agent leg in the same step as the consumer's.
      expect(env.rig.sim.channel(call.call_uuid)).toBeUndefined();
      expect(env.rig.sim.channel(agentLeg!)).toBeUndefined();

      // The freed agent takes the next lead.
      const next = await placedCall(env, tenant, campaignId, nextPhone);
      await watch.next((ev) => ev.name === 'CHANNEL_BRIDGE' && header(ev, 'Unique-ID') === next.call_uuid, 'the next call bridged to the agent');
      // The seat rings, then is on the call once the bridge is recorded (the switch reports the bridge first).
      const onNext = await waitFor(async () => {
        const agent = await withTenant(env.app.deps.db, tenant.tenantId, (tx) => tx.agent.findUniqueOrThrow({ where: { id: agentId! } }));
        return agent.presence === 'on_call' ? agent : undefined;
      }, 10_000, 'the agent on the next call');
      expect(onNext).toMatchObject({ presence: 'on_call', activeCallAttemptId: next.id });
      // The first call's hangup report, delivered again (an activity retry whose reply was lost),
      // must leave the agent on the call it took since.
      await finalizeCall(env.app.deps, {
        tenantId: tenant.tenantId,
        callAttemptId: call.id,
        callUuid: call.call_uuid,
        facts: { hangupCause: 'ALLOTTED_TIMEOUT', answered: true, amdVerdict: 'HUMAN', abandoned: false },
        endedAt: reaped.ended_at,
        answeredAt: call.answered_at,
        sipResponseCode: null,
        agentId: agentId!,
      });
      const stillOnNext = await withTenant(env.app.deps.db, tenant.tenantId, (tx) => tx.agent.findUniqueOrThrow({ where: { id: agentId! } }));
      expect(stillOnNext).toMatchObject({ presence: 'on_call', activeCallAttemptId: next.id });

      // The consumer of the next call hangs up: the agent is free, and the run counts one call reaped.
      env.rig.sim.remoteHangup(next.call_uuid);
      expect(await finalRow(env, tenant, campaignId, next.id)).toMatchObject({ disposition: 'answered_human', agent_id: agentId });
      const agent = await withTenant(env.app.deps.db, tenant.tenantId, (tx) => tx.agent.findUniqueOrThrow({ where: { id: agentId! } }));
      expect(agent).toMatchObject({ presence: 'available', activeCallAttemptId: null });
      const s = await waitFor(async () => {
        const st = await stats(env, tenant, campaignId);
        return st && st.finished === 2 ? st : undefined;
      });
      expect(s).toMatchObject({ dialed: 2, finished: 2, reaped: 1, in_flight: 0 });

      await stopCampaign(env, tenant, campaignId);
    } finally {
      hangUpLeftovers(env, watch);
      watch.close();
    }
  });

  it('caller ids: presents only the active DIDs of the pool; with every DID quarantined the running campaign dials nothing', async () => {
    const env = fast;
    const tenant = await provisionTenant(env.app);
    await disclose(env, tenant);
    const watch = new CallWatch(env.rig.sim, tenant.tenantId);
    try {
      // An active number comes from the operator (house); a quarantined one is registered by the tenant.
      const did = async (e164: string, status: string) => {
        const res =
          status === 'active'
            ? await env.app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [e164] } })
            : await env.app.request('POST', '/v1/dids', { token: tenant.apiKey, body: { e164, status } });
        expect(res.status).toBe(201);
        return (res.body.did ?? res.body.dids[0]) as { id: string; e164: string };
      };
      const active = await did('+13035550111', 'active');
      const parked = await did('+13035550122', 'quarantine');
      const campaignId = await createCampaign(env, tenant, { campaign_type: 'tts_blast', tts_prompt: 'A message from Acme Recovery.', caller_id_pool: [active.id, parked.id] });
      const phones = [numberEnding(prefix, 11, 1), numberEnding(prefix, 12, 2), numberEnding(prefix, 13, 3)];
      await seedLeads(env.app, tenant, campaignId, phones);
      await startCampaign(env, tenant, campaignId, {});

      const done = await waitFor(
        async () => {
          const c = await cdr(env, tenant, campaignId);
          return c.originals.length === 3 && c.originals.every((o) => c.finalOf(o.id)) ? c : undefined;
        },
        // Generous: the wait ends as soon as the calls finish; a loaded 2-core machine needs more than a few ticks.
        60_000,
        'three finished calls',
      );
      for (const o of done.originals) {
        expect(o.from_number).toBe(active.e164);
        expect(done.finalOf(o.id)).toMatchObject({ from_number: active.e164 });
        const created = watch.of(o.call_uuid, 'CHANNEL_CREATE');
        expect(created.map((ev) => header(ev, 'Caller-Caller-ID-Number'))).toEqual([active.e164]);
      }

      const quarantined = await env.app.request('PATCH', `/v1/dids/${active.id}`, { token: tenant.apiKey, body: { status: 'quarantine' } });
      expect(quarantined.status).toBe(200);
      await seedLeads(env.app, tenant, campaignId, [numberEnding(prefix, 14, 4), numberEnding(prefix, 15, 5)]);
      await ticksPass(env, tenant, campaignId, 2);
      expect((await cdr(env, tenant, campaignId)).originals).toHaveLength(3);
      const st = await env.app.request('GET', `/v1/campaigns/${campaignId}/stats`, { token: tenant.apiKey });
      expect(st.body).toMatchObject({ state: 'running', running: true, stats: { dialed: 3, in_flight: 0 } });

      await stopCampaign(env, tenant, campaignId);
    } finally {
      watch.close();
    }
  });

  it('continue-as-new: the run hands over after ticksPerRun ticks and its counters carry over', async () => {
    const env = fast;
    const tenant = await provisionTenant(env.app);
    await disclose(env, tenant);
    const campaignId = await createCampaign(env, tenant, { campaign_type: 'tts_blast', tts_prompt: 'A message from Acme Recovery.' });
    await seedLeads(env.app, tenant, campaignId, [numberEnding(prefix, 16, 22)]);
    // A lead without consent: refused once, then resting blocked_cooldown_ms, so `blocked` only carries.
    await debtWithoutConsent(env, tenant, campaignId, numberEnding(prefix, 17, 23));
    await withTenant(env.app.deps.db, tenant.tenantId, (tx) => tx.campaign.update({ where: { id: campaignId }, data: { state: 'running' } }));

    const workflowId = campaignRunWorkflowId(tenant.tenantId, campaignId);
    const first = await env.app.deps.temporal!.workflow.start(campaignRunWorkflow, {
      workflowId,
      taskQueue: env.taskQueue,
      args: [{ tenantId: tenant.tenantId, campaignId, options: RunnerOptionsBody.parse({ tick_ms: 100, batch_size: 10 }), ticksPerRun: 3 }],
    });
    const firstRunId = first.firstExecutionRunId;
    const firstRun = env.app.deps.temporal!.workflow.getHandle(workflowId, firstRunId);
    // Woken while it waits: once its lead is dialed and the other refused, the run has nothing to do.
    await waitFor(
      async () => {
        if ((await firstRun.describe()).status.name === 'CONTINUED_AS_NEW') return true;
        if ((await firstRun.query(runStateQuery)).waiting?.kind === 'idle') await firstRun.signal(wakeSignal);
        return undefined;
      },
      20_000,
      'the first run to continue as new',
    );
    // A closed run still answers queries (replayed from its history): its counters as it handed over.
    const before = await firstRun.query(statsQuery);
    const beforeState = await firstRun.query(runStateQuery);
    expect(beforeState.tick).toBe(3);
    // The short call ended within the first run, so the new run must neither lose nor count it again.
    expect(before).toMatchObject({ dialed: 1, blocked: 1, finished: 1, pacing: { connected: 1 } });

    const latest = env.app.deps.temporal!.workflow.getHandle(workflowId);
    expect((await latest.describe()).runId).not.toBe(firstRunId);
    const afterState = await waitFor(async () => {
      const st = await latest.query(runStateQuery);
      return st.tick > beforeState.tick ? st : undefined;
    }, 20_000, 'a tick of the new run');
    expect(afterState.runStartedAt).toBe(beforeState.runStartedAt);
    expect(await latest.query(statsQuery)).toMatchObject({ dialed: 1, blocked: 1, finished: 1, in_flight: 0, pacing: { connected: 1, abandoned: 0 } });

    await stopCampaign(env, tenant, campaignId);
  });

  it('callbacks first: a due callback is dialed before fresh leads and becomes done with an audit entry', async () => {
    const env = fast;
    const tenant = await provisionTenant(env.app);
    await disclose(env, tenant);
    const campaignId = await createCampaign(env, tenant, { campaign_type: 'tts_blast', tts_prompt: 'A message from Acme Recovery.' });
    const fresh = [numberEnding(prefix, 18, 24)];
    await seedLeads(env.app, tenant, campaignId, fresh);
    const callbackPhone = numberEnding(prefix, 20, 26);
    const [callbackDebt] = await seedLeads(env.app, tenant, campaignId, [callbackPhone]);
    // The debt rests as a lead (first in lead order otherwise, by its creation time): only its callback makes it due.
    const callback = await withTenant(env.app.deps.db, tenant.tenantId, async (tx) => {
      await tx.debt.update({ where: { id: callbackDebt! }, data: { nextDialableAt: new Date(Date.now() + 86_400_000) } });
      return tx.callback.create({
        data: { tenantId: tenant.tenantId, debtId: callbackDebt!, contactPhone: callbackPhone, campaignId, scheduledAt: new Date(Date.now() - 60_000) },
      });
    });
    await startCampaign(env, tenant, campaignId, { batch_size: 1 });

    const done = await waitFor(
      async () => {
        const c = await cdr(env, tenant, campaignId);
        return c.originals.length === 2 ? c : undefined;
      },
      20_000,
      'two calls',
    );
    const order = [...done.originals].sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at));
    expect(order.map((o) => o.to_number)).toEqual([callbackPhone, ...fresh]);
    const callbackCall = order[0]!;
    expect(callbackCall.debt_id).toBe(callbackDebt);

    const after = await withTenant(env.app.deps.db, tenant.tenantId, async (tx) => ({
      callback: await tx.callback.findUniqueOrThrow({ where: { id: callback.id } }),
      audit: await tx.auditLog.findMany({ where: { action: 'callback.dialed' } }),
    }));
    expect(after.callback.status).toBe('done');
    expect(after.audit).toEqual([
      expect.objectContaining({ subjectType: 'callback', subjectId: callback.id, payload: expect.objectContaining({ from: 'pending', to: 'done', call_attempt_id: callbackCall.id }) }),
    ]);

    await stopCampaign(env, tenant, campaignId);
  });

  it('a refused callback rests like a refused lead instead of taking every tick\'s batch', async () => {
    const env = fast;
    const tenant = await provisionTenant(env.app);
    await disclose(env, tenant);
    const campaignId = await createCampaign(env, tenant, { campaign_type: 'tts_blast', tts_prompt: 'A message from Acme Recovery.' });
    const freshPhone = numberEnding(prefix, 22, 27);
    const callbackPhone = numberEnding(prefix, 23, 28);
    const [callbackDebt] = await seedLeads(env.app, tenant, campaignId, [callbackPhone]);
    await seedLeads(env.app, tenant, campaignId, [freshPhone]);
    // A disputed debt is refused by the engine (tenant policy); its callback was booked before the dispute.
    await withTenant(env.app.deps.db, tenant.tenantId, async (tx) => {
      await tx.debt.update({ where: { id: callbackDebt! }, data: { state: 'disputed', nextDialableAt: new Date(Date.now() + 86_400_000) } });
      await tx.callback.create({
        data: { tenantId: tenant.tenantId, debtId: callbackDebt!, contactPhone: callbackPhone, campaignId, scheduledAt: new Date(Date.now() - 60_000) },
      });
    });
    await startCampaign(env, tenant, campaignId, { batch_size: 1 });
    await waitFor(async () => ((await runState(env, tenant, campaignId)).tick >= 1 ? true : undefined));
    await ticksPass(env, tenant, campaignId, 2);
    try {
      const refusals = await withTenant(env.app.deps.db, tenant.tenantId, (tx) => tx.complianceRefusal.findMany({ where: { debtId: callbackDebt! } }));
      expect(refusals.map((r) => r.refusals)).toEqual([1]);
      expect((await cdr(env, tenant, campaignId)).originals.map((o) => o.to_number)).toEqual([freshPhone]);
    } finally {
      await stopCampaign(env, tenant, campaignId);
    }
  });

  it('progressive with deferred bridge: a call waiting for its AMD verdict holds its agent (no second line)', async () => {
    const env = slowAmd;
    const tenant = await provisionTenant(env.app);
    const watch = new CallWatch(env.rig.sim, tenant.tenantId);
    try {
      await seatAgents(env.app, env.rig, tenant, 1);
      const campaignId = await createCampaign(env, tenant, { campaign_type: 'progressive', deferred_bridge: true });
      await seedLeads(env.app, tenant, campaignId, [numberEnding(prefix, 24, 53), numberEnding(prefix, 25, 54)]);
      await startCampaign(env, tenant, campaignId, {});
      const first = await waitFor(async () => earliest((await cdr(env, tenant, campaignId)).originals), 20_000, 'the first call');
      await watch.next((ev) => ev.name === 'CHANNEL_BRIDGE' && header(ev, 'Unique-ID') === first.call_uuid, 'the first call bridged after its verdict', 10_000);
      await ticksPass(env, tenant, campaignId, 2);
      try {
        const c = await cdr(env, tenant, campaignId);
        expect(c.originals).toHaveLength(1);
        expect(c.originals.map((o) => c.finalOf(o.id)?.disposition).filter((d) => d === 'abandoned')).toEqual([]);
      } finally {
        await stopCampaign(env, tenant, campaignId);
      }
    } finally {
      hangUpLeftovers(env, watch);
      watch.close();
    }
  });

  it('the run\'s agent_domain reaches the agent leg', async () => {
    const env = fast;
    const tenant = await provisionTenant(env.app);
    const agentLegs: SwitchEvent[] = [];
    const off = env.rig.sim.onEvent((ev) => {
      if (ev.name === 'CHANNEL_CREATE' && header(ev, 'variable_dd_agent_id')) agentLegs.push(ev);
    });
    try {
      // The softphone registers in the run's agent domain: FreeSWITCH bridges user/<ext>@<domain> only to a
      // user registered there.
      const seat = await checkInSeat(env.app, tenant);
      await registerSeat(env.app, env.rig, tenant, { ...seat, softphone: { ...seat.softphone, domain: 'pbx.example.com' } });
      const agentId = seat.agentId;
      const campaignId = await createCampaign(env, tenant, { campaign_type: 'progressive' });
      const phone = numberEnding(prefix, 26, 55);
      await seedLeads(env.app, tenant, campaignId, [phone]);
      await startCampaign(env, tenant, campaignId, { agent_domain: 'pbx.example.com' });
      const call = await placedCall(env, tenant, campaignId, phone);
      await finalRow(env, tenant, campaignId, call.id);
      await stopCampaign(env, tenant, campaignId);
      const legs = agentLegs.filter((ev) => header(ev, 'variable_dd_agent_id') === agentId);
      expect(legs.map((ev) => header(ev, 'variable_dialed_domain'))).toEqual(['pbx.example.com']);
    } finally {
      off();
    }
  });
});
