import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { CAMPAIGN_RUN_STATE_QUERY, campaignRunWorkflowId, type CampaignRunState } from '../../src/contracts/campaign-run';
import { withTenant } from '../../src/lib/tenancy';
import { createCallback } from '../../src/modules/callbacks/callback.service';
import { IDLE_BACKSTOP_MS } from '../../src/modules/dialer/next-wake';
import { checkInSeat, daytimePrefix, numberEnding, registerSeat, runWorker, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';

jest.setTimeout(120_000);

/**
 * The event-driven dial loop (docs/dial-loop.md, "Event-driven"): an idle run does not tick, and
 * each producer of work wakes it through production code: a debt import, a seat's softphone
 * registering on the switch, a callback's timer, the calling window opening; pause and stop reach
 * a sleeping run at once; preview and manual runs have no timer at all.
 */
let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `dial-loop-${randomUUID()}`;

beforeAll(async () => {
  rig = await startSwitchRig({ ringMs: 100, talkMs: 400, promptMs: 100 });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});
afterAll(() => recordWorkflowHistories('dial-loop.event-driven', [taskQueue], { campaignRunWorkflow: 2 }));

const prefix = daytimePrefix();
let serial = 0;
const nextNumber = () => numberEnding(prefix, (serial += 1), 10 + (serial % 40));

const handleOf = (t: ProvisionedTenant, campaignId: string): WorkflowHandle => app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(t.tenantId, campaignId));
const runState = (t: ProvisionedTenant, campaignId: string) => handleOf(t, campaignId).query<CampaignRunState>(CAMPAIGN_RUN_STATE_QUERY);

async function campaign(t: ProvisionedTenant, body: Record<string, unknown>): Promise<string> {
  const res = await app.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name: `dl-${randomUUID()}`, ...body } });
  expect(res.status).toBe(201);
  return res.body.campaign.id;
}

const messageCampaign = (t: ProvisionedTenant, extra: Record<string, unknown> = {}) =>
  campaign(t, { campaign_type: 'tts_blast', tts_prompt: 'A message from Acme Recovery.', ...extra });

async function start(t: ProvisionedTenant, campaignId: string): Promise<void> {
  const res = await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: t.apiKey, body: { tick_ms: 100, batch_size: 10 } });
  expect(res.status).toBe(200);
}

async function lifecycle(t: ProvisionedTenant, campaignId: string, verb: 'pause' | 'resume' | 'stop'): Promise<void> {
  const res = await app.request('POST', `/v1/campaigns/${campaignId}/${verb}`, { token: t.apiKey });
  expect(res.status).toBe(200);
}

/** POST /v1/debts/import: one debt per number, into the campaign (or none). */
async function importDebts(t: ProvisionedTenant, campaignId: string | null, phones: string[]): Promise<string[]> {
  const refs = phones.map(() => `dl-${randomUUID()}`);
  const res = await app.request('POST', '/v1/debts/import', {
    token: t.apiKey,
    body: {
      debts: phones.map((phone, i) => ({
        external_ref: refs[i],
        consumer_ref: `c-${refs[i]}`,
        amount_cents: 10_000,
        ...(campaignId ? { campaign_id: campaignId } : {}),
        contacts: [{ phone_e164: phone }],
      })),
    },
  });
  expect(res.status).toBe(200);
  expect(res.body.failed).toEqual([]);
  const debts = await withTenant(app.deps.db, t.tenantId, (tx) => tx.debt.findMany({ where: { externalRef: { in: refs } }, select: { id: true, externalRef: true } }));
  return refs.map((r) => debts.find((d) => d.externalRef === r)!.id);
}

/** The run, once it sleeps: its state says it is idle (or waits for signals only), with the reason. */
async function sleeping(t: ProvisionedTenant, campaignId: string, kind: 'idle' | 'signal_only' = 'idle'): Promise<CampaignRunState> {
  return waitFor(
    async () => {
      const s = await runState(t, campaignId).catch(() => undefined);
      return s && s.tick >= 1 && s.waiting?.kind === kind ? s : undefined;
    },
    20_000,
    `the run of ${campaignId} to wait (${kind})`,
  );
}

async function calls(t: ProvisionedTenant, campaignId: string) {
  return withTenant(app.deps.db, t.tenantId, (tx) => tx.callAttempt.findMany({ where: { campaignId, correctsId: null }, orderBy: { startedAt: 'asc' } }));
}

async function firstCall(t: ProvisionedTenant, campaignId: string, timeoutMs = 10_000) {
  return waitFor(async () => (await calls(t, campaignId))[0], timeoutMs, `a call of ${campaignId}`);
}

async function disclose(t: ProvisionedTenant): Promise<void> {
  const res = await app.request('PUT', '/v1/artificial-voice-disclosure', { token: t.apiKey, body: { text: 'This is an automated call from Acme Recovery, a debt collector.' } });
  expect(res.status).toBe(200);
}

const secondsUntil = (iso: string) => (Date.parse(iso) - Date.now()) / 1000;

describe('the event-driven dial loop', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
    await disclose(tenant);
  });

  it('an idle running campaign sleeps until its backstop: no tick and no history event over many cadences', async () => {
    // Progressive with no leads and no seats: nothing can be dialed.
    const campaignId = await campaign(tenant, { campaign_type: 'progressive' });
    await start(tenant, campaignId);
    const idle = await sleeping(tenant, campaignId);
    expect(idle.waiting).toMatchObject({ kind: 'idle', reason: 'no_agent_capacity' });
    const at = (idle.waiting as { at: string }).at;
    expect(secondsUntil(at)).toBeGreaterThan(IDLE_BACKSTOP_MS / 1000 - 60);
    expect(secondsUntil(at)).toBeLessThanOrEqual(IDLE_BACKSTOP_MS / 1000);

    const before = await handleOf(tenant, campaignId).describe();
    // Thirty cadences of tick_ms 100: a run on the fixed cadence would have ticked many times. Only
    // time passing can show that nothing happens, so this one wait is a sleep.
    await new Promise((r) => setTimeout(r, 3000));
    const after = await handleOf(tenant, campaignId).describe();
    expect(after.historyLength).toBe(before.historyLength);
    expect((await runState(tenant, campaignId)).tick).toBe(idle.tick);
    await lifecycle(tenant, campaignId, 'stop');
  });

  it('wakes and dials as soon as leads are imported into it', async () => {
    const campaignId = await messageCampaign(tenant);
    await start(tenant, campaignId);
    const idle = await sleeping(tenant, campaignId);
    expect(idle.waiting).toMatchObject({ kind: 'idle', reason: 'no_dialable_leads' });
    expect(secondsUntil((idle.waiting as { at: string }).at)).toBeGreaterThan(60);

    const importedAt = Date.now();
    const [debtId] = await importDebts(tenant, campaignId, [nextNumber()]);
    const call = await firstCall(tenant, campaignId);
    expect(call.debtId).toBe(debtId);
    expect(call.startedAt!.getTime() - importedAt).toBeLessThan(10_000);
    await lifecycle(tenant, campaignId, 'stop');
  });

  it('wakes and dials when a seat becomes reachable: its softphone registers through the switch directory', async () => {
    const seatTenant = await provisionTenant(app);
    const campaignId = await campaign(seatTenant, { campaign_type: 'progressive' });
    await importDebts(seatTenant, campaignId, [nextNumber()]);
    await start(seatTenant, campaignId);
    // Checked in but not registered: a browser seat is not reachable yet, and no seat is busy.
    const seat = await checkInSeat(app, seatTenant);
    const idle = await waitFor(
      async () => {
        const s = await runState(seatTenant, campaignId);
        return s.waiting?.kind === 'idle' && s.waiting.reason === 'no_agent_capacity' && s.tick >= 2 ? s : undefined;
      },
      20_000,
      'the run to wait for a seat after the check-in woke it',
    );
    expect(secondsUntil((idle.waiting as { at: string }).at)).toBeGreaterThan(60);
    expect(await calls(seatTenant, campaignId)).toHaveLength(0);

    const registeredAt = Date.now();
    await registerSeat(app, rig, seatTenant, seat);
    const call = await firstCall(seatTenant, campaignId);
    expect(call.startedAt!.getTime() - registeredAt).toBeLessThan(10_000);
    await lifecycle(seatTenant, campaignId, 'stop');
  });

  it('sleeps until a callback is due, and its timer wakes the run to dial it', async () => {
    const campaignId = await messageCampaign(tenant);
    // The debt is in no campaign: only the callback brings this campaign work.
    const phone = nextNumber();
    const [debtId] = await importDebts(tenant, null, [phone]);
    await start(tenant, campaignId);
    await sleeping(tenant, campaignId);

    // The API books callbacks at least 10 minutes ahead: the service is given a clock 10 minutes
    // behind, so the callback (and its timer workflow) is due in a few seconds.
    const scheduledAt = new Date(Math.ceil((Date.now() + 6000) / 1000) * 1000);
    const cb = await createCallback(
      app.deps,
      tenant.tenantId,
      { type: 'api_key', id: null },
      { debt_id: debtId!, contact_phone: phone, scheduled_at: scheduledAt.toISOString(), campaign_id: campaignId },
      new Date(scheduledAt.getTime() - 10 * 60_000 - 1000),
    );
    // The callback wakes nothing by itself: the run finds it when its timer signals (at scheduled_at).
    const call = await firstCall(tenant, campaignId, 20_000);
    expect(call.debtId).toBe(debtId);
    expect(call.startedAt!.getTime()).toBeGreaterThanOrEqual(scheduledAt.getTime());
    expect(call.startedAt!.getTime() - scheduledAt.getTime()).toBeLessThan(8000);
    const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callback.findUniqueOrThrow({ where: { id: cb.id } }));
    expect(stored.status).toBe('done');
    await lifecycle(tenant, campaignId, 'stop');
  });

  it('a lead refused for quiet hours rests until the calling window opens, and the run wakes then to dial it', async () => {
    // A zone where the campaign window (start in a few seconds, two hours long) stays within one local day.
    const zone = ['UTC', 'Asia/Tokyo', 'America/New_York', 'Europe/Berlin', 'America/Los_Angeles'].find((z) => {
      const hour = Number(new Intl.DateTimeFormat('en-US', { timeZone: z, hour: 'numeric', hourCycle: 'h23' }).format(new Date()));
      return hour >= 1 && hour <= 20;
    })!;
    const opensAt = new Date(Math.ceil((Date.now() + 12_000) / 1000) * 1000);
    const hhmmss = (d: Date) => new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(d);
    const campaignId = await messageCampaign(tenant, {
      calling_window_start: hhmmss(opensAt),
      calling_window_end: hhmmss(new Date(opensAt.getTime() + 2 * 3600_000)),
      default_timezone: zone,
    });
    const [debtId] = await importDebts(tenant, campaignId, [nextNumber()]);
    await start(tenant, campaignId);
    const idle = await sleeping(tenant, campaignId);
    // Refused once (quiet_hours), then asleep until the window opens, not for the 15-minute cooldown.
    expect(idle.waiting).toEqual({ kind: 'idle', reason: 'no_dialable_leads', at: opensAt.toISOString() });
    const refusals = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.complianceRefusal.findMany({ where: { debtId: debtId! } }));
    expect(refusals.map((r) => r.gate)).toEqual(['quiet_hours']);

    const call = await firstCall(tenant, campaignId, 30_000);
    expect(call.debtId).toBe(debtId);
    expect(call.startedAt!.getTime()).toBeGreaterThanOrEqual(opensAt.getTime());
    expect(call.startedAt!.getTime() - opensAt.getTime()).toBeLessThan(8000);
    await lifecycle(tenant, campaignId, 'stop');
  });

  it('pause, resume and stop reach a sleeping run at once', async () => {
    const campaignId = await messageCampaign(tenant);
    await start(tenant, campaignId);
    const idle = await sleeping(tenant, campaignId);

    await lifecycle(tenant, campaignId, 'pause');
    await waitFor(async () => ((await runState(tenant, campaignId)).paused ? true : undefined), 5000, 'the run to hold');
    await lifecycle(tenant, campaignId, 'resume');
    await waitFor(
      async () => {
        const s = await runState(tenant, campaignId);
        return !s.paused && s.tick > idle.tick ? true : undefined;
      },
      5000,
      'the resumed run to tick',
    );
    const stoppedAt = Date.now();
    await lifecycle(tenant, campaignId, 'stop');
    expect(await handleOf(tenant, campaignId).result()).toMatchObject({ ended: 'stopped' });
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
  });

  it.each(['preview', 'manual'])('a %s campaign has no timer loop: its run waits for signals only', async (type) => {
    const campaignId = await campaign(tenant, { campaign_type: type });
    await importDebts(tenant, campaignId, [nextNumber()]);
    await start(tenant, campaignId);
    const waiting = await sleeping(tenant, campaignId, 'signal_only');
    expect(waiting.waiting).toEqual({ kind: 'signal_only', reason: 'human_initiated_only' });

    // An import wakes it (a signal): it looks once, dials nothing, and waits for signals again.
    await importDebts(tenant, campaignId, [nextNumber()]);
    await waitFor(
      async () => {
        const s = await runState(tenant, campaignId);
        return s.tick > waiting.tick && s.waiting?.kind === 'signal_only' ? true : undefined;
      },
      10_000,
      'the woken run to look and wait again',
    );
    const history = await handleOf(tenant, campaignId).fetchHistory();
    expect((history.events ?? []).filter((e) => e.timerStartedEventAttributes)).toHaveLength(0);
    expect(await calls(tenant, campaignId)).toHaveLength(0);
    await lifecycle(tenant, campaignId, 'stop');
  });
});
