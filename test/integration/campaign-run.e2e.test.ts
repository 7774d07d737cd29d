import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { runStateQuery } from '../../workflows/campaign-run.workflow';
import { campaignRunWorkflowId } from '../../workflows/ids';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { recordWorkflowHistories } from '../helpers/workflow-histories';

jest.setTimeout(120_000);

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `dial-e2e-${randomUUID()}`;

beforeAll(async () => {
  rig = await startSwitchRig();
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});
afterAll(() => recordWorkflowHistories('campaign-run.e2e', [taskQueue], { campaignRunWorkflow: 1, callSessionWorkflow: 2 }));

async function finals(tenant: ProvisionedTenant, campaignId: string) {
  const res = await app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: tenant.apiKey });
  expect(res.status).toBe(200);
  const rows: any[] = res.body.call_attempts;
  const originals = rows.filter((r) => r.corrects_id === null);
  const latest = new Map<string, any>();
  for (const r of rows.filter((x) => x.corrects_id !== null && x.ended_at !== null)) {
    if (!latest.has(r.corrects_id)) latest.set(r.corrects_id, r);
  }
  return { originals, finalOf: (id: string) => latest.get(id) };
}

describe('a progressive campaign over HTTP against the switch simulator', () => {
  it('dials every outcome of the plan into the CDR, pauses, resumes, stops, and takes a promise', async () => {
    const tenant = await provisionTenant(app);
    const [agentId] = await seatAgents(app, rig, tenant, 1);
    const created = await app.request('POST', '/v1/campaigns', {
      token: tenant.apiKey,
      body: { name: `e2e-${randomUUID()}`, campaign_type: 'progressive', deferred_bridge: true },
    });
    expect(created.status).toBe(201);
    const campaignId: string = created.body.campaign.id;
    const prefix = daytimePrefix();
    const plan = { human: 10, machine: 61, busy: 72, no_answer: 83, rejected: 94 } as const;
    const phones = Object.values(plan).map((d, i) => numberEnding(prefix, i, d));
    const debtIds = await seedLeads(app, tenant, campaignId, phones);

    const started = await app.request('POST', `/v1/campaigns/${campaignId}/start`, {
      token: tenant.apiKey,
      body: { tick_ms: 200, batch_size: 10, call_ttl_ms: 60_000 },
    });
    expect(started.status).toBe(200);
    expect(started.body.campaign.state).toBe('running');
    // start on a running campaign is idempotent; a bad runner option is refused before anything changes.
    expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey })).status).toBe(200);

    const done = await waitFor(
      async () => {
        const f = await finals(tenant, campaignId);
        return f.originals.length === 5 && f.originals.every((o) => f.finalOf(o.id)) ? f : undefined;
      },
      60_000,
      'five finished calls',
    );
    const byPhone = new Map(done.originals.map((o) => [o.to_number, o]));
    const outcome = (phone: string) => {
      const o = byPhone.get(phone)!;
      return { original: o, final: done.finalOf(o.id) };
    };
    const human = outcome(phones[0]!);
    expect(human.final).toMatchObject({ disposition: 'answered_human', amd_verdict: 'HUMAN', agent_id: agentId, hangup_cause: 'NORMAL_CLEARING', sip_response_code: 200 });
    expect(human.original.answered_at).not.toBeNull();
    expect(human.original.call_uuid).toBe(human.original.id);
    expect(human.original.compliance_snapshot).toMatchObject({ allowed: true });
    expect(outcome(phones[1]!).final).toMatchObject({ disposition: 'machine', amd_verdict: 'MACHINE', agent_id: null });
    expect(outcome(phones[2]!).final).toMatchObject({ disposition: 'busy', hangup_cause: 'USER_BUSY', sip_response_code: 486, answered_at: null });
    expect(outcome(phones[3]!).final).toMatchObject({ disposition: 'no_answer', hangup_cause: 'NO_ANSWER', sip_response_code: 480 });
    expect(outcome(phones[4]!).final).toMatchObject({ disposition: 'rejected', hangup_cause: 'CALL_REJECTED', sip_response_code: 403 });
    // Nothing of the campaign is live any more; every call has ended.
    const live = await app.request('GET', `/v1/calls?campaign_id=${campaignId}&live=true`, { token: tenant.apiKey });
    expect(live.body.calls).toEqual([]);
    const ended = await app.request('GET', `/v1/calls?campaign_id=${campaignId}&live=false`, { token: tenant.apiKey });
    expect(ended.body.calls).toHaveLength(5);
    // The agent is free again once its call ended.
    const agent = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.findUniqueOrThrow({ where: { id: agentId! } }));
    expect(agent).toMatchObject({ presence: 'available', activeCallAttemptId: null });

    // The run's counters are as of its latest tick.
    const stats = await waitFor(async () => {
      const res = await app.request('GET', `/v1/campaigns/${campaignId}/stats`, { token: tenant.apiKey });
      return res.body.stats?.finished === 5 ? res : undefined;
    });
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ campaign_id: campaignId, state: 'running', running: true });
    expect(stats.body.stats).toMatchObject({ dialed: 5, finished: 5, reaped: 0, in_flight: 0, pacing: { connected: 1, abandoned: 0 } });

    // Pause: the run holds its loop; a lead added now is not dialed until resume.
    const paused = await app.request('POST', `/v1/campaigns/${campaignId}/pause`, { token: tenant.apiKey });
    expect(paused.body.campaign.state).toBe('paused');
    expect((await app.request('POST', `/v1/campaigns/${campaignId}/pause`, { token: tenant.apiKey })).status).toBe(409);
    const handle = app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(tenant.tenantId, campaignId));
    const held = await waitFor(async () => {
      const s = await handle.query(runStateQuery);
      return s.paused ? s : undefined;
    });
    expect((await app.request('GET', `/v1/campaigns/${campaignId}/stats`, { token: tenant.apiKey })).body).toMatchObject({ running: false, stats: null });
    const [lateDebt] = await seedLeads(app, tenant, campaignId, [numberEnding(prefix, 9, 20)]);
    expect((await handle.query(runStateQuery)).tick).toBe(held.tick);

    const resumed = await app.request('POST', `/v1/campaigns/${campaignId}/resume`, { token: tenant.apiKey });
    expect(resumed.body.campaign.state).toBe('running');
    await waitFor(
      async () => {
        const f = await finals(tenant, campaignId);
        const late = f.originals.find((o) => o.debt_id === lateDebt);
        return late && f.finalOf(late.id) ? true : undefined;
      },
      30_000,
      'the lead added while paused to be dialed after resume',
    );

    // A disposition with a promise on the answered call moves the debt in the same transaction.
    const promisedDate = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
    const disposed = await app.request('POST', `/v1/call_attempts/${human.original.id}/disposition`, {
      token: tenant.apiKey,
      body: { disposition: 'promise_to_pay', promise: { amount_cents: 5000, currency: 'USD', promised_date: promisedDate } },
    });
    expect(disposed.status).toBe(201);
    expect(disposed.body.promise).toMatchObject({ amount_cents: 5000, status: 'pending' });
    // The correction carries the call's final facts and the agent who had it.
    expect(disposed.body.call_attempt).toMatchObject({ disposition: 'promise_to_pay', agent_id: agentId, hangup_cause: 'NORMAL_CLEARING' });
    const debt = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findUniqueOrThrow({ where: { id: debtIds[0]! } }));
    expect(debt.state).toBe('promise_to_pay');

    const stopped = await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey });
    expect(stopped.body.campaign.state).toBe('completed');
    await expect(handle.result()).resolves.toMatchObject({ ended: 'stopped' });
    expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey })).status).toBe(409);
    const archived = await app.request('POST', `/v1/campaigns/${campaignId}/archive`, { token: tenant.apiKey });
    expect(archived.body.campaign.state).toBe('archived');

    // Every switch leg of the run belongs to exactly one attempt: nothing placed twice.
    const f = await finals(tenant, campaignId);
    expect(new Set(f.originals.map((o) => o.debt_id)).size).toBe(f.originals.length);
  });
});
