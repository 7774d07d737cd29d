import { randomUUID } from 'node:crypto';
import { createAgentActivities } from '../../activities/agent.activities';
import { withTenant, withTenantSql } from '../../src/lib/tenancy';
import { releaseAgentsOfCalls } from '../../src/modules/dialer/call-session.service';
import { agentWrapUpWorkflowId } from '../../workflows/agent-wrap-up.workflow';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';

/** Lead numbers of this file: a counter, so two calls of one tenant never dial the same number. */
let leadSerial = Math.floor(Math.random() * 50);

jest.setTimeout(120_000);

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `wrap-up-${randomUUID()}`;

beforeAll(async () => {
  // The consumer talks until the test hangs up.
  rig = await startSwitchRig({ talkMs: 60_000 });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});
afterAll(() => recordWorkflowHistories('wrap-up', [taskQueue], { agentWrapUpWorkflow: 2 }));

const seat = (tenant: ProvisionedTenant, agentId: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.findUniqueOrThrow({ where: { id: agentId } }));

const wrapUpAudits = (tenant: ProvisionedTenant, agentId: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.auditLog.findMany({ where: { subjectType: 'agent', subjectId: agentId, action: { startsWith: 'agent.wrap_up' } }, orderBy: [{ seq: 'asc' }] }),
  );

const presenceIs = (tenant: ProvisionedTenant, agentId: string, presence: string) => async () => {
  const row = await seat(tenant, agentId);
  return row.presence === presence ? row : undefined;
};

/** A manual dial that bridges one seated agent; answers once the agent is on the call. */
async function bridgedCall(tenant: ProvisionedTenant) {
  const [agentId] = await seatAgents(app, rig, tenant, 1);
  const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `wu-${randomUUID()}`, campaign_type: 'manual' } });
  expect(created.status).toBe(201);
  const campaignId: string = created.body.campaign.id;
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey })).status).toBe(200);
  const [debtId] = await seedLeads(app, tenant, campaignId, [numberEnding(daytimePrefix(), (leadSerial += 1), 10)]);
  const dialed = await app.request('POST', `/v1/campaigns/${campaignId}/dial`, { token: tenant.apiKey, body: { debt_id: debtId, agent_id: agentId } });
  expect(dialed.body.status).toBe('dialing');
  const callId: string = dialed.body.call_id;
  await waitFor(() => Promise.resolve(rig.sim.channel(callId)?.bridgedTo ?? undefined), 30_000, 'the agent bridge');
  // The seat's presence is written after the switch confirms the bridge, so it can trail the simulator by a moment.
  await waitFor(presenceIs(tenant, agentId!, 'on_call'), 10_000, 'on_call after the bridge');
  return { agentId: agentId!, callId, attemptId: dialed.body.call_attempt.id as string };
}

const tenantWithWrapUp = (seconds: number) => provisionTenant(app, { agent_wrap_up_seconds: seconds });

describe('the wrap-up timer', () => {
  it('a bridged call’s end puts the seat in wrap_up; the durable timer makes it available, across a worker restart', async () => {
    const tenant = await tenantWithWrapUp(3);
    const { agentId, callId, attemptId } = await bridgedCall(tenant);
    rig.sim.remoteHangup(callId);

    const wrapping = await waitFor(presenceIs(tenant, agentId, 'wrap_up'), 30_000, 'wrap_up');
    const until = wrapping.wrapUpUntil!;
    expect(until.getTime() - wrapping.updatedAt.getTime()).toBe(3000);
    expect(wrapping.activeCallAttemptId).toBe(attemptId);
    const [started] = await wrapUpAudits(tenant, agentId);
    expect(started).toMatchObject({ action: 'agent.wrap_up_started', actorType: 'workflow' });
    expect(started!.payload).toEqual({ from: 'on_call', to: 'wrap_up', call_attempt_id: attemptId, wrap_up_seconds: 3, wrap_up_until: until.toISOString() });

    // The timer is Temporal's: a worker that goes away while it runs loses nothing.
    await worker.stop();
    worker = await runWorker(app, taskQueue);

    const freed = await waitFor(presenceIs(tenant, agentId, 'available'), 30_000, 'available after the wrap-up');
    expect(Date.now()).toBeGreaterThanOrEqual(until.getTime());
    expect(freed).toMatchObject({ wrapUpUntil: null, activeCallAttemptId: null });
    const handle = app.deps.temporal!.workflow.getHandle(agentWrapUpWorkflowId(tenant.tenantId, agentId, until.toISOString()));
    expect(await handle.result()).toEqual({ expired: true });
    const rows = await wrapUpAudits(tenant, agentId);
    expect(rows.map((r) => r.action)).toEqual(['agent.wrap_up_started', 'agent.wrap_up_expired']);
    expect(rows[1]!.payload).toEqual({ from: 'wrap_up', to: 'available', call_attempt_id: attemptId, wrap_up_until: until.toISOString() });
  });

  it('a manual wrap-up before expiry ends it early; the timer then changes nothing', async () => {
    const tenant = await tenantWithWrapUp(4);
    const { agentId, callId } = await bridgedCall(tenant);
    rig.sim.remoteHangup(callId);
    const wrapping = await waitFor(presenceIs(tenant, agentId, 'wrap_up'), 30_000, 'wrap_up');

    const ended = await app.request('POST', `/v1/agents/${agentId}/wrap-up`, { token: tenant.apiKey });
    expect(ended.status).toBe(200);
    expect((await seat(tenant, agentId)).presence).toBe('available');

    const handle = app.deps.temporal!.workflow.getHandle(agentWrapUpWorkflowId(tenant.tenantId, agentId, wrapping.wrapUpUntil!.toISOString()));
    expect(await handle.result()).toEqual({ expired: false });
    expect((await seat(tenant, agentId)).presence).toBe('available');
    expect((await wrapUpAudits(tenant, agentId)).map((r) => r.action)).toEqual(['agent.wrap_up_started', 'agent.wrap_up_ended']);
  });

  it('with a cap of 0 the seat goes straight back to available and no wrap-up is recorded', async () => {
    const tenant = await tenantWithWrapUp(0);
    const { agentId, callId, attemptId } = await bridgedCall(tenant);
    rig.sim.remoteHangup(callId);
    await waitFor(
      async () => {
        const res = await app.request('GET', '/v1/call_attempts?limit=1000', { token: tenant.apiKey });
        return res.body.call_attempts?.find((r: { corrects_id: string | null; ended_at: string | null }) => r.corrects_id === attemptId && r.ended_at);
      },
      30_000,
      'the final row',
    );
    expect(await seat(tenant, agentId)).toMatchObject({ presence: 'available', wrapUpUntil: null, activeCallAttemptId: null });
    expect(await wrapUpAudits(tenant, agentId)).toEqual([]);
  });

  it('a cap raised by the operator applies from the next call end', async () => {
    const tenant = await tenantWithWrapUp(0);
    const patched = await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN, body: { agent_wrap_up_seconds: 1 } });
    expect(patched.body.tenant.agent_wrap_up_seconds).toBe(1);
    const { agentId, callId } = await bridgedCall(tenant);
    rig.sim.remoteHangup(callId);
    await waitFor(async () => ((await wrapUpAudits(tenant, agentId)).length === 2 ? true : undefined), 30_000, 'wrap-up started and expired');
    expect((await seat(tenant, agentId)).presence).toBe('available');
  });

  it('a call the reaper ends starts the wrap-up too', async () => {
    const tenant = await tenantWithWrapUp(2);
    const [agentId] = await seatAgents(app, rig, tenant, 1);
    const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `wu-${randomUUID()}`, campaign_type: 'progressive' } });
    const campaignId: string = created.body.campaign.id;
    await seedLeads(app, tenant, campaignId, [numberEnding(daytimePrefix(), Math.floor(Math.random() * 100), 20)]);
    const started = await app.request('POST', `/v1/campaigns/${campaignId}/start`, {
      token: tenant.apiKey,
      body: { tick_ms: 200, batch_size: 10, call_ttl_ms: 1500 },
    });
    expect(started.status).toBe(200);
    try {
      await waitFor(presenceIs(tenant, agentId!, 'wrap_up'), 30_000, 'wrap_up after the reaper');
      const reaped = await app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: tenant.apiKey });
      expect(reaped.body.call_attempts.map((r: { disposition: string | null }) => r.disposition)).toContain('reaped');
      await waitFor(presenceIs(tenant, agentId!, 'available'), 30_000, 'available after the wrap-up');
      expect((await wrapUpAudits(tenant, agentId!)).map((r) => r.action)).toEqual(['agent.wrap_up_started', 'agent.wrap_up_expired']);
    } finally {
      expect((await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey })).status).toBe(200);
    }
  });
});

describe('the wrap-up transitions', () => {
  /** A seat on a call of the tenant, as the dial loop leaves it after the claim. */
  async function seatOnCall(tenant: ProvisionedTenant) {
    const [agentId] = await seatAgents(app, rig, tenant, 1);
    const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `wu-${randomUUID()}`, campaign_type: 'manual' } });
    const [debtId] = await seedLeads(app, tenant, created.body.campaign.id, [numberEnding(daytimePrefix(), 1, 10)]);
    const attemptId = await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      const debt = await tx.debt.findUniqueOrThrow({ where: { id: debtId! } });
      const [row] = await tx.$queryRaw<{ id: string }[]>`
        INSERT INTO call_attempts (tenant_id, debt_id, campaign_id, to_number, from_number, started_at, consumer_ref, debt_key)
        VALUES (${tenant.tenantId}::uuid, ${debt.id}::uuid, ${created.body.campaign.id}::uuid, '+12125550100', '+12125550199', now(), 'c', 'k')
        RETURNING id`;
      await tx.agent.update({ where: { id: agentId! }, data: { presence: 'on_call', activeCallAttemptId: row!.id } });
      return row!.id;
    });
    return { agentId: agentId!, attemptId };
  }

  it('a repeated call end finds the same wrap-up again (so a lost timer start is retried) and records it once', async () => {
    const tenant = await provisionTenant(app, { agent_wrap_up_seconds: 600 });
    const { agentId, attemptId } = await seatOnCall(tenant);
    const first = await withTenantSql(app.deps.db, tenant.tenantId, (sql) => releaseAgentsOfCalls(sql, tenant.tenantId, [attemptId]));
    const again = await withTenantSql(app.deps.db, tenant.tenantId, (sql) => releaseAgentsOfCalls(sql, tenant.tenantId, [attemptId]));
    expect(first).toEqual([{ agentId, wrapUpUntil: expect.any(String) }]);
    expect(again).toEqual(first);
    expect((await wrapUpAudits(tenant, agentId)).map((r) => r.action)).toEqual(['agent.wrap_up_started']);
  });

  it('a stale timer (another wrap-up, or one already ended) changes nothing; the current one ends it', async () => {
    const tenant = await provisionTenant(app, { agent_wrap_up_seconds: 600 });
    const { agentId, attemptId } = await seatOnCall(tenant);
    const [wrap] = await withTenantSql(app.deps.db, tenant.tenantId, (sql) => releaseAgentsOfCalls(sql, tenant.tenantId, [attemptId]));
    const { expireAgentWrapUp } = createAgentActivities(app.deps);
    const stale = new Date(Date.parse(wrap!.wrapUpUntil) - 1).toISOString();
    expect(await expireAgentWrapUp({ tenantId: tenant.tenantId, agentId, wrapUpUntil: stale })).toEqual({ expired: false });
    expect((await seat(tenant, agentId)).presence).toBe('wrap_up');
    expect(await expireAgentWrapUp({ tenantId: tenant.tenantId, agentId, wrapUpUntil: wrap!.wrapUpUntil })).toEqual({ expired: true });
    expect(await expireAgentWrapUp({ tenantId: tenant.tenantId, agentId, wrapUpUntil: wrap!.wrapUpUntil })).toEqual({ expired: false });
    expect((await seat(tenant, agentId)).presence).toBe('available');
    // Another tenant's timer never reaches the seat.
    const other = await provisionTenant(app);
    expect(await expireAgentWrapUp({ tenantId: other.tenantId, agentId, wrapUpUntil: wrap!.wrapUpUntil })).toEqual({ expired: false });
  });
});
