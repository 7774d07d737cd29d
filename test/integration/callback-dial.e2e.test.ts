import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { dialTick } from '../../src/modules/dialer/dial-tick.service';
import { DEFAULT_RUNNER_OPTIONS } from '../../src/modules/dialer/runner-options';
import type { SwitchEvent } from '../../src/switch/simulator/protocol';
import { callbackTimerWorkflow } from '../../workflows';
import { callbackWorkflowId } from '../../workflows/ids';
import {
  checkInSeat,
  daytimePrefix,
  numberEnding,
  pointSwitchAtDirectory,
  registerSeat,
  runWorker,
  startSwitchRig,
  waitFor,
  type CheckedInSeat,
  type RunningWorker,
  type SwitchRig,
} from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';

jest.setTimeout(120_000);

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `callback-dial-${randomUUID()}`;
const events: SwitchEvent[] = [];

beforeAll(async () => {
  rig = await startSwitchRig({ ringMs: 200, talkMs: 1500 });
  rig.sim.onEvent((ev) => events.push(ev));
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
  pointSwitchAtDirectory(app, rig);
});
afterAll(async () => {
  await recordWorkflowHistories('callback-dial', [taskQueue], { callbackTimerWorkflow: ['activity:dialCallback', 'TIMER_FIRED'] });
  await worker?.stop();
  await app?.close();
  await rig?.close();
});

const header = (ev: SwitchEvent, name: string) => ev.headers.find(([k]) => k === name)?.[1];
/** Every switch leg created toward an extension (the agent legs the product rang). */
const agentLegsTo = (extension: string) =>
  events.filter((ev) => ev.name === 'CHANNEL_CREATE' && header(ev, 'Caller-Destination-Number') === extension).map((ev) => header(ev, 'Unique-ID'));

let serial = Math.floor(Math.random() * 90);

/** A house DID the operator gives the tenant: the caller id a callback without a campaign presents. */
async function houseDid(tenant: ProvisionedTenant): Promise<string> {
  const e164 = `+1646${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
  const res = await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [e164] } });
  expect(res.status).toBe(201);
  return e164;
}

async function progressiveCampaign(tenant: ProvisionedTenant): Promise<string> {
  const res = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `cb-${randomUUID()}`, campaign_type: 'progressive', amd_enabled: false } });
  expect(res.status).toBe(201);
  return res.body.campaign.id as string;
}

/** A debt imported through the API (its contact carries consent), with a number a person answers (CONTRACT section 2). */
async function importDebt(tenant: ProvisionedTenant, campaignId: string | null): Promise<{ debtId: string; phone: string }> {
  serial = (serial + 1) % 90;
  const phone = numberEnding(daytimePrefix(), serial, 10 + (serial % 40));
  const externalRef = `CB-${randomUUID().slice(0, 8)}`;
  const res = await app.request('POST', '/v1/debts/import', {
    token: tenant.apiKey,
    body: { debts: [{ external_ref: externalRef, consumer_ref: `C-${serial}`, ...(campaignId ? { campaign_id: campaignId } : {}), contacts: [{ phone_e164: phone }] }] },
  });
  expect(res.status).toBeLessThan(300);
  const debt = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findFirstOrThrow({ where: { externalRef } }));
  return { debtId: debt.id, phone };
}

/**
 * A callback booked through the API (scheduled_at at least ten minutes ahead, as the API demands),
 * then its timer run as at its due moment: the timer the API started is replaced by one whose
 * scheduled_at has come, with the rest of the API's input.
 */
async function bookAndDue(
  tenant: ProvisionedTenant,
  body: { debt_id: string; contact_phone: string; agent_id?: string; campaign_id?: string | null },
  timing: { missAfterMs?: number; retryMs?: number; blockedRetryMs?: number } = {},
) {
  const created = await app.request('POST', '/v1/callbacks', { token: tenant.apiKey, body: { ...body, scheduled_at: new Date(Date.now() + 11 * 60_000).toISOString() } });
  expect(created.status).toBe(201);
  const callback = created.body.callback as { id: string; campaign_id: string | null; agent_id: string | null };
  const workflowId = callbackWorkflowId(tenant.tenantId, callback.id);
  await app.deps.temporal!.workflow.getHandle(workflowId).terminate('the test makes it due now');
  const handle = await app.deps.temporal!.workflow.start(callbackTimerWorkflow, {
    taskQueue,
    workflowId,
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    args: [
      {
        tenantId: tenant.tenantId,
        callbackId: callback.id,
        campaignId: callback.campaign_id,
        scheduledAt: new Date(Date.now() - 1000).toISOString(),
        missAfterMs: timing.missAfterMs ?? 60_000,
        retryMs: timing.retryMs ?? 200,
        blockedRetryMs: timing.blockedRetryMs ?? 200,
      },
    ],
  });
  return { callback, handle };
}

const callbackRow = (tenant: ProvisionedTenant, id: string) => withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callback.findUniqueOrThrow({ where: { id } }));
const attemptsOf = (tenant: ProvisionedTenant, debtId: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callAttempt.findMany({ where: { debtId, correctsId: null } }));

/** The call of the debt, once finished: its original row, final row and timeline through the API. */
async function finishedCall(tenant: ProvisionedTenant, debtId: string) {
  return waitFor(
    async () => {
      const [original] = await attemptsOf(tenant, debtId);
      if (!original?.callUuid) return undefined;
      const call = await app.request('GET', `/v1/calls/${original.callUuid}`, { token: tenant.apiKey });
      const rows: any[] = (await app.request('GET', `/v1/call_attempts?debt_id=${debtId}&limit=100`, { token: tenant.apiKey })).body.call_attempts;
      const final = rows.find((r) => r.corrects_id === original.id && r.ended_at !== null);
      return final ? { original: call.body.call, final, timeline: call.body.timeline as Array<{ event: string } & Record<string, unknown>> } : undefined;
    },
    30_000,
    'the callback call finished',
  );
}

/** How many times the timer tried to dial so far (its completed dialCallback activities). */
async function dialTries(workflowId: string): Promise<number> {
  const history = await app.deps.temporal!.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'dialCallback').length;
}

async function registeredSeat(tenant: ProvisionedTenant, label: string): Promise<CheckedInSeat> {
  const seat = await checkInSeat(app, tenant, label);
  await registerSeat(app, rig, tenant, seat);
  return seat;
}

describe('a due callback dialed by its timer', () => {
  it('naming its agent: bridges exactly that agent\'s registered seat, while another seat is free', async () => {
    const tenant = await provisionTenant(app);
    const did = await houseDid(tenant);
    const campaignId = await progressiveCampaign(tenant);
    const other = await registeredSeat(tenant, 'Other');
    const named = await registeredSeat(tenant, 'Named');
    const { debtId, phone } = await importDebt(tenant, campaignId);

    const { callback, handle } = await bookAndDue(tenant, { debt_id: debtId, contact_phone: phone, agent_id: named.agentId });
    await expect(handle.result()).resolves.toEqual({ status: 'done' });

    const { original, final, timeline } = await finishedCall(tenant, debtId);
    expect(original).toMatchObject({ campaign_id: campaignId, agent_id: named.agentId, to_number: phone, from_number: did });
    expect(final).toMatchObject({ disposition: 'answered_human', agent_id: named.agentId });
    expect(timeline.filter((t) => t.event === 'bridged')).toEqual([expect.objectContaining({ agent_id: named.agentId })]);
    // The switch rang the named seat's extension only.
    expect(agentLegsTo(named.extension)).toHaveLength(1);
    expect(agentLegsTo(other.extension)).toHaveLength(0);

    expect((await callbackRow(tenant, callback.id)).status).toBe('done');
    const audit = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { action: 'callback.dialed', subjectId: callback.id } }));
    expect(audit).toEqual([
      expect.objectContaining({
        actorType: 'workflow',
        actorId: callbackWorkflowId(tenant.tenantId, callback.id),
        payload: { from: 'pending', to: 'done', call_attempt_id: original.id, agent_id: named.agentId, campaign_id: campaignId },
      }),
    ]);
  });

  it('naming an agent not reachable at the due time: waits (no other seat takes it) and dials once the agent registers', async () => {
    const tenant = await provisionTenant(app);
    await houseDid(tenant);
    const campaignId = await progressiveCampaign(tenant);
    const other = await registeredSeat(tenant, 'Other');
    // Checked in, softphone not registered: not dialable (CONTRACT section 10).
    const named = await checkInSeat(app, tenant, 'Named');
    const { debtId, phone } = await importDebt(tenant, campaignId);

    const { callback, handle } = await bookAndDue(tenant, { debt_id: debtId, contact_phone: phone, agent_id: named.agentId });
    await waitFor(async () => ((await dialTries(handle.workflowId)) >= 3 ? true : undefined), 30_000, 'three tries of the timer');
    expect(await attemptsOf(tenant, debtId)).toEqual([]);
    expect((await callbackRow(tenant, callback.id)).status).toBe('pending');
    // The campaign's run leaves it alone too: a tick of the running campaign claims nothing (the
    // debt rests as a lead, so only its callback could make it due there).
    await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      await tx.debt.update({ where: { id: debtId }, data: { nextDialableAt: new Date(Date.now() + 86_400_000) } });
      await tx.campaign.update({ where: { id: campaignId }, data: { state: 'running' } });
    });
    const tick = await dialTick(app.deps, {
      tenantId: tenant.tenantId,
      campaignId,
      workflowId: `test-${campaignId}`,
      tickKey: `tick-${randomUUID()}`,
      options: { ...DEFAULT_RUNNER_OPTIONS, batch_size: 5 },
      pacing: { ratio: 1, recent: [], connected: 0, abandoned: 0 },
      lastCounters: null,
      runStartedAt: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(tick).toMatchObject({ placed: 0, idle: 'no_dialable_leads' });
    expect(await attemptsOf(tenant, debtId)).toEqual([]);
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.update({ where: { id: campaignId }, data: { state: 'paused' } }));

    await registerSeat(app, rig, tenant, named);
    await expect(handle.result()).resolves.toEqual({ status: 'done' });
    const { final, timeline } = await finishedCall(tenant, debtId);
    expect(final).toMatchObject({ disposition: 'answered_human', agent_id: named.agentId });
    expect(timeline.find((t) => t.event === 'bridged')).toMatchObject({ agent_id: named.agentId });
    expect(agentLegsTo(other.extension)).toHaveLength(0);
  });

  it('naming an agent who never becomes reachable: missed when the window ends, nothing dialed', async () => {
    const tenant = await provisionTenant(app);
    await houseDid(tenant);
    const campaignId = await progressiveCampaign(tenant);
    await registeredSeat(tenant, 'Other');
    const named = await checkInSeat(app, tenant, 'Named');
    const { debtId, phone } = await importDebt(tenant, campaignId);

    const { callback, handle } = await bookAndDue(tenant, { debt_id: debtId, contact_phone: phone, agent_id: named.agentId }, { missAfterMs: 1500 });
    await expect(handle.result()).resolves.toEqual({ status: 'missed' });
    expect((await callbackRow(tenant, callback.id)).status).toBe('missed');
    expect(await attemptsOf(tenant, debtId)).toEqual([]);
  });

  it('without a campaign: dialed from the tenant\'s own DID to a reachable seat', async () => {
    const tenant = await provisionTenant(app);
    const did = await houseDid(tenant);
    const seat = await registeredSeat(tenant, 'Any');
    const { debtId, phone } = await importDebt(tenant, null);

    const { callback, handle } = await bookAndDue(tenant, { debt_id: debtId, contact_phone: phone });
    expect(callback).toMatchObject({ campaign_id: null, agent_id: null });
    await expect(handle.result()).resolves.toEqual({ status: 'done' });
    const { original, final, timeline } = await finishedCall(tenant, debtId);
    expect(original).toMatchObject({ campaign_id: null, to_number: phone, from_number: did });
    expect(final).toMatchObject({ disposition: 'answered_human', agent_id: seat.agentId });
    expect(timeline.find((t) => t.event === 'bridged')).toMatchObject({ agent_id: seat.agentId });
    // Decided by the compliance engine like any automated dial: the snapshot is the decision's evidence.
    expect(original.compliance_snapshot).toMatchObject({ decision_id: expect.any(String) });
  });

  it('without a campaign, refused by the compliance engine: every try is recorded evidence, nothing rings, and it is missed', async () => {
    const tenant = await provisionTenant(app);
    await houseDid(tenant);
    await registeredSeat(tenant, 'Any');
    const { debtId, phone } = await importDebt(tenant, null);
    // A disputed debt: the tenant policy refuses to call about it.
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.update({ where: { id: debtId }, data: { state: 'disputed' } }));
    const { callback, handle } = await bookAndDue(tenant, { debt_id: debtId, contact_phone: phone }, { missAfterMs: 1500 });
    await expect(handle.result()).resolves.toEqual({ status: 'missed' });
    expect((await callbackRow(tenant, callback.id)).status).toBe('missed');
    expect(await attemptsOf(tenant, debtId)).toEqual([]);
    const refusals = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.complianceRefusal.findMany({ where: { debtId } }));
    // One row per debt, gate and day, counting every refused try.
    expect(refusals).toEqual([expect.objectContaining({ gate: 'tenant_policy', campaignId: null })]);
    expect(refusals[0]!.refusals).toBeGreaterThanOrEqual(2);
  });

  it('without a campaign and with no active DID of the tenant: waits for a caller id, then is missed', async () => {
    const tenant = await provisionTenant(app);
    await registeredSeat(tenant, 'Any');
    const { debtId, phone } = await importDebt(tenant, null);
    const { handle } = await bookAndDue(tenant, { debt_id: debtId, contact_phone: phone }, { missAfterMs: 1000 });
    await expect(handle.result()).resolves.toEqual({ status: 'missed' });
    expect(await attemptsOf(tenant, debtId)).toEqual([]);
  });
});
