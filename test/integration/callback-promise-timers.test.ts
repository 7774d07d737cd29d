import { randomUUID } from 'node:crypto';
import { ActivityFailure, ApplicationFailure, defaultPayloadConverter, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { withTenant } from '../../src/lib/tenancy';
import { createWorker } from '../../workers/worker';
import { callbackTimerWorkflow, promiseDeadlineWorkflow } from '../../workflows';
import { callbackWorkflowId, campaignRunWorkflowId, promiseWorkflowId } from '../../workflows/ids';
import { provisionTenant, startTestApp, uniqueName, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const taskQueue = `timers-${randomUUID()}`;

let app: TestApp;
let worker: Worker;
let connection: NativeConnection;
let stopWorker: () => void;
let running: Promise<void>;
beforeAll(async () => {
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue });
  ({ worker, connection, shutdown: stopWorker } = await createWorker(app.deps, {
    address: app.config.TEMPORAL_ADDRESS!,
    namespace: app.config.TEMPORAL_NAMESPACE,
    taskQueue,
    workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE,
  }));
  running = worker.run();
});
afterAll(async () => {
  stopWorker();
  await running;
  await connection.close();
  await app.close();
});
afterAll(() => recordWorkflowHistories('callback-promise-timers', [taskQueue], { callbackTimerWorkflow: ['SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED', 'WORKFLOW_EXECUTION_FAILED'], promiseDeadlineWorkflow: ['WORKFLOW_EXECUTION_COMPLETED', 'WORKFLOW_EXECUTION_FAILED'] }));

const temporal = () => app.deps.temporal!;
const utcDay = (days: number) => new Date(Date.now() + days * DAY).toISOString().slice(0, 10);
/** A whole-second instant `ms` from now, in RFC 3339. */
const fromNow = (ms: number) => new Date(Math.floor((Date.now() + ms) / 1000) * 1000).toISOString();

let phoneSeq = 0;
const nextPhone = () => `+1303558${String(1000 + (++phoneSeq % 9000)).padStart(4, '0')}`;

interface Debt {
  id: string;
  phone: string;
  campaignId: string;
}

/** A campaign and one of its debts, imported the way a client does it. */
async function importDebt(tenant: ProvisionedTenant): Promise<Debt> {
  const campaign = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.create({ data: { tenantId: tenant.tenantId, name: uniqueName('camp') } }));
  const externalRef = uniqueName('ext');
  const phone = nextPhone();
  const res = await app.request('POST', '/v1/debts/import', {
    token: tenant.apiKey,
    body: { debts: [{ external_ref: externalRef, consumer_ref: 'cons', amount_cents: 50_000, currency: 'USD', campaign_id: campaign.id, contacts: [{ phone_e164: phone }] }] },
  });
  if (res.status !== 200 || res.body.imported !== 1) throw new Error(`import: ${res.status} ${res.text}`);
  const debt = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findFirstOrThrow({ where: { externalRef } }));
  return { id: debt.id, phone, campaignId: campaign.id };
}

/** An answered original call attempt of the debt, written the way the CDR tests write one. */
async function seedCall(tenant: ProvisionedTenant, debt: Debt): Promise<string> {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const { externalRef } = await tx.debt.findUniqueOrThrow({ where: { id: debt.id } });
    const call = await tx.callAttempt.create({
      data: {
        tenantId: tenant.tenantId,
        debtId: debt.id,
        campaignId: debt.campaignId,
        consumerRef: 'cons',
        debtKey: externalRef,
        callUuid: randomUUID(),
        toNumber: debt.phone,
        startedAt: new Date(Date.now() - HOUR),
        answeredAt: new Date(Date.now() - HOUR + 5000),
        disposition: 'answered_human',
      },
    });
    return call.id;
  });
}

/** A callback written directly: the API refuses a scheduled_at in the past. */
async function seedCallback(tenant: ProvisionedTenant, debt: Debt, status = 'pending', campaignId: string | null = debt.campaignId) {
  return withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.callback.create({
      data: { tenantId: tenant.tenantId, debtId: debt.id, contactPhone: debt.phone, campaignId, scheduledAt: new Date(Date.now() - HOUR), status },
    }),
  );
}

/** A promise written directly: the API refuses a promised date that is not in the future. */
async function seedPromise(tenant: ProvisionedTenant, debt: Debt, callAttemptId: string, promisedDate: string, status = 'pending') {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    await tx.debt.update({ where: { id: debt.id }, data: { state: 'promise_to_pay' } });
    return tx.paymentPromise.create({
      data: {
        tenantId: tenant.tenantId,
        debtId: debt.id,
        callAttemptId,
        amountCents: 10_000n,
        currency: 'USD',
        promisedDate: new Date(`${promisedDate}T00:00:00Z`),
        status,
      },
    });
  });
}

const auditOf = (tenant: ProvisionedTenant, debtId: string, action: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { subjectType: 'debt', subjectId: debtId, action }, orderBy: { seq: 'asc' } }));

/** The input the workflow was started with, from its first history event. */
async function startArgs(handle: WorkflowHandle): Promise<unknown[]> {
  const history = await handle.fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  return payloads.map((p) => defaultPayloadConverter.fromPayload(p));
}

const runCallbackTimer = (tenant: ProvisionedTenant, callbackId: string, campaignId: string | null) =>
  temporal().workflow.start(callbackTimerWorkflow, {
    taskQueue,
    workflowId: callbackWorkflowId(tenant.tenantId, callbackId),
    args: [{ tenantId: tenant.tenantId, callbackId, campaignId, scheduledAt: new Date(Date.now() - HOUR).toISOString(), missAfterMs: 0 }],
  });

const runPromiseDeadline = (tenant: ProvisionedTenant, promiseId: string, promisedDate: string) =>
  temporal().workflow.start(promiseDeadlineWorkflow, {
    taskQueue,
    workflowId: promiseWorkflowId(tenant.tenantId, promiseId),
    args: [{ tenantId: tenant.tenantId, promiseId, promisedDate }],
  });

describe('callback timer', () => {
  let tenant: ProvisionedTenant;
  let debt: Debt;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
    debt = await importDebt(tenant);
  });

  it('POST /v1/callbacks starts callback:<tenant>:<id> on the task queue with the callback and CALLBACK_MISS_AFTER_MS', async () => {
    const scheduledAt = fromNow(2 * HOUR);
    const res = await app.request('POST', '/v1/callbacks', { token: tenant.apiKey, body: { debt_id: debt.id, contact_phone: debt.phone, scheduled_at: scheduledAt } });
    expect(res.status).toBe(201);
    const handle = temporal().workflow.getHandle(`callback:${tenant.tenantId}:${res.body.callback.id}`);
    try {
      const described = await handle.describe();
      expect({ type: described.type, taskQueue: described.taskQueue, status: described.status.name }).toEqual({
        type: 'callbackTimerWorkflow',
        taskQueue,
        status: 'RUNNING',
      });
      expect(await startArgs(handle)).toEqual([
        { tenantId: tenant.tenantId, callbackId: res.body.callback.id, campaignId: debt.campaignId, scheduledAt: new Date(scheduledAt).toISOString(), missAfterMs: 30 * 60_000 },
      ]);
    } finally {
      await handle.terminate('test done');
    }
  });

  it('keeps the callback (201) and logs a warning without the phone number when the timer cannot start', async () => {
    const start = jest.spyOn(temporal().workflow, 'start').mockRejectedValueOnce(new Error('temporal unavailable'));
    const warn = jest.spyOn(app.deps.logger, 'warn');
    try {
      const res = await app.request('POST', '/v1/callbacks', { token: tenant.apiKey, body: { debt_id: debt.id, contact_phone: debt.phone, scheduled_at: fromNow(3 * HOUR) } });
      expect(res.status).toBe(201);
      expect(start).toHaveBeenCalledTimes(1);
      const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callback.findUnique({ where: { id: res.body.callback.id } }));
      expect(stored?.status).toBe('pending');
      expect(warn).toHaveBeenCalledTimes(1);
      const logged = JSON.stringify(warn.mock.calls[0]);
      expect(logged).toContain(res.body.callback.id);
      expect(logged).toContain('temporal unavailable');
      expect(logged).not.toContain(debt.phone.slice(1));
    } finally {
      start.mockRestore();
      warn.mockRestore();
    }
  });

  it('marks a still-pending callback missed with an audit entry by the workflow, after trying to wake the run', async () => {
    const callback = await seedCallback(tenant, debt);
    const handle = await runCallbackTimer(tenant, callback.id, debt.campaignId);
    // No run workflow is open for the campaign: the failed wake must not fail the timer.
    expect(await handle.result()).toEqual({ status: 'missed' });

    const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callback.findUniqueOrThrow({ where: { id: callback.id } }));
    expect(stored.status).toBe('missed');
    const audit = (await auditOf(tenant, debt.id, 'callback.missed')).filter((a) => (a.payload as { callback_id: string }).callback_id === callback.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorType: 'workflow', actorId: null, payload: { callback_id: callback.id, from: 'pending', to: 'missed' } });

    const events = (await handle.fetchHistory()).events ?? [];
    const wake = events.map((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes).filter(Boolean);
    expect(wake.map((w) => [w!.signalName, w!.workflowExecution?.workflowId])).toEqual([['wake', campaignRunWorkflowId(tenant.tenantId, debt.campaignId)]]);
  });

  it('sends no wake signal for a callback without a campaign: the timer tries to dial it itself (this worker has no switch), then misses it', async () => {
    const callback = await seedCallback(tenant, debt, 'pending', null);
    const handle = await runCallbackTimer(tenant, callback.id, null);
    expect(await handle.result()).toEqual({ status: 'missed' });
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.some((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)).toBe(false);
    const dialTry = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'dialCallback');
    expect(dialTry).toBeDefined();
    const completed = events.find((e) => e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === dialTry!.eventId?.toString());
    expect(completed).toBeDefined();
  });

  it.each(['done', 'cancelled', 'missed'])('leaves a %s callback as it is, without an audit entry', async (status) => {
    const callback = await seedCallback(tenant, debt, status);
    const handle = await runCallbackTimer(tenant, callback.id, debt.campaignId);
    expect(await handle.result()).toEqual({ status });
    const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callback.findUniqueOrThrow({ where: { id: callback.id } }));
    expect(stored.status).toBe(status);
    const audit = (await auditOf(tenant, debt.id, 'callback.missed')).filter((a) => (a.payload as { callback_id: string }).callback_id === callback.id);
    expect(audit).toHaveLength(0);
  });

  it('fails without retrying, typed CallbackNotFound, for a callback the tenant does not have', async () => {
    const other = await provisionTenant(app);
    const callback = await seedCallback(tenant, debt);
    const handle = await runCallbackTimer(other, callback.id, null);
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const activityFailure = (err as WorkflowFailedError).cause as ActivityFailure;
    expect(activityFailure).toBeInstanceOf(ActivityFailure);
    expect(activityFailure.cause).toBeInstanceOf(ApplicationFailure);
    expect((activityFailure.cause as ApplicationFailure).type).toBe('CallbackNotFound');
    const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callback.findUniqueOrThrow({ where: { id: callback.id } }));
    expect(stored.status).toBe('pending');
  });
});

describe('promise deadline', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  it('a promise_to_pay disposition starts promise:<tenant>:<id> on the task queue with the promised date', async () => {
    const debt = await importDebt(tenant);
    const callId = await seedCall(tenant, debt);
    const promisedDate = utcDay(7);
    const res = await app.request('POST', `/v1/call_attempts/${callId}/disposition`, {
      token: tenant.apiKey,
      body: { disposition: 'promise_to_pay', promise: { amount_cents: 5000, currency: 'USD', promised_date: promisedDate } },
    });
    expect(res.status).toBe(201);
    const handle = temporal().workflow.getHandle(`promise:${tenant.tenantId}:${res.body.promise.id}`);
    try {
      const described = await handle.describe();
      expect({ type: described.type, taskQueue: described.taskQueue, status: described.status.name }).toEqual({
        type: 'promiseDeadlineWorkflow',
        taskQueue,
        status: 'RUNNING',
      });
      expect(await startArgs(handle)).toEqual([{ tenantId: tenant.tenantId, promiseId: res.body.promise.id, promisedDate }]);
    } finally {
      await handle.terminate('test done');
    }
  });

  it('starts nothing for a disposition without a promise', async () => {
    const debt = await importDebt(tenant);
    const callId = await seedCall(tenant, debt);
    const start = jest.spyOn(temporal().workflow, 'start');
    try {
      const res = await app.request('POST', `/v1/call_attempts/${callId}/disposition`, { token: tenant.apiKey, body: { disposition: 'no_answer' } });
      expect(res.status).toBe(201);
      expect(start).not.toHaveBeenCalled();
    } finally {
      start.mockRestore();
    }
  });

  it('keeps the disposition (201) and logs a warning when the deadline cannot start', async () => {
    const debt = await importDebt(tenant);
    const callId = await seedCall(tenant, debt);
    const start = jest.spyOn(temporal().workflow, 'start').mockRejectedValueOnce(new Error('temporal unavailable'));
    const warn = jest.spyOn(app.deps.logger, 'warn');
    try {
      const res = await app.request('POST', `/v1/call_attempts/${callId}/disposition`, {
        token: tenant.apiKey,
        body: { disposition: 'promise_to_pay', promise: { amount_cents: 5000, currency: 'USD', promised_date: utcDay(3) } },
      });
      expect(res.status).toBe(201);
      const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.paymentPromise.findUnique({ where: { id: res.body.promise.id } }));
      expect(stored?.status).toBe('pending');
      expect(warn).toHaveBeenCalledTimes(1);
      expect(JSON.stringify(warn.mock.calls[0])).toContain(res.body.promise.id);
    } finally {
      start.mockRestore();
      warn.mockRestore();
    }
  });

  it('breaks a pending promise whose date has passed everywhere, audited by the workflow, and releases the debt', async () => {
    const debt = await importDebt(tenant);
    const callId = await seedCall(tenant, debt);
    const promise = await seedPromise(tenant, debt, callId, utcDay(-2));
    const handle = await runPromiseDeadline(tenant, promise.id, utcDay(-2));
    expect(await handle.result()).toEqual({ status: 'broken' });

    const { stored, state } = await withTenant(app.deps.db, tenant.tenantId, async (tx) => ({
      stored: await tx.paymentPromise.findUniqueOrThrow({ where: { id: promise.id } }),
      state: (await tx.debt.findUniqueOrThrow({ where: { id: debt.id } })).state,
    }));
    expect(stored.status).toBe('broken');
    expect(state).toBe('in_collection');
    const audit = await auditOf(tenant, debt.id, 'promise.broken');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actorType: 'workflow',
      actorId: null,
      payload: { promise_id: promise.id, from: 'pending', to: 'broken', debt_state: { from: 'promise_to_pay', to: 'in_collection' } },
    });
  });

  it.each(['kept', 'cancelled', 'broken'])('leaves a %s promise as it is, without an audit entry', async (status) => {
    const debt = await importDebt(tenant);
    const callId = await seedCall(tenant, debt);
    const promise = await seedPromise(tenant, debt, callId, utcDay(-2), status);
    const handle = await runPromiseDeadline(tenant, promise.id, utcDay(-2));
    expect(await handle.result()).toEqual({ status });
    const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.paymentPromise.findUniqueOrThrow({ where: { id: promise.id } }));
    expect(stored.status).toBe(status);
    expect(await auditOf(tenant, debt.id, 'promise.broken')).toHaveLength(0);
  });

  it('fails without retrying, typed PromiseNotFound, for a promise the tenant does not have', async () => {
    const handle = await runPromiseDeadline(tenant, randomUUID(), utcDay(-2));
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const activityFailure = (err as WorkflowFailedError).cause as ActivityFailure;
    expect(activityFailure).toBeInstanceOf(ActivityFailure);
    expect((activityFailure.cause as ApplicationFailure).type).toBe('PromiseNotFound');
  });
});
