import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { MIN_HANDLE_SAMPLES, MIN_LEAD_MS } from '../../src/modules/dialer/pacing';
import { runStateQuery } from '../../workflows/campaign-run.workflow';
import { campaignRunWorkflowId } from '../../workflows/ids';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueEmail, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const LEAD_MS = 25 * SECOND;

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
/** Seeds the tenant's call history the handle time is measured from, as call sessions write it (no RLS). */
let owner: Client;
const taskQueue = `planned-shifts-${randomUUID()}`;

// Consumers never answer and ring until the ring timeout (45 s): every line a tick dials stays
// in progress, so the campaign's calls count exactly the lines its ticks wanted.
beforeAll(async () => {
  rig = await startSwitchRig({ ringMs: 120_000 });
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

interface Original {
  id: string;
  started_at: string;
  call_uuid: string | null;
}

async function originals(tenant: ProvisionedTenant, campaignId: string): Promise<Original[]> {
  const res = await app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: tenant.apiKey });
  expect(res.status).toBe(200);
  return (res.body.call_attempts as Array<Original & { corrects_id: string | null }>).filter((r) => r.corrects_id === null);
}

async function plan(tenant: ProvisionedTenant, agentId: string, startMs: number, endMs: number): Promise<{ id: string; starts_at: string; ends_at: string }> {
  const res = await app.request('POST', '/v1/planned-shifts', {
    token: tenant.apiKey,
    body: { agent_id: agentId, starts_at: new Date(Date.now() + startMs).toISOString(), ends_at: new Date(Date.now() + endMs).toISOString() },
  });
  expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
  return res.body.planned_shift;
}

async function startCampaign(tenant: ProvisionedTenant, body: Record<string, unknown>, leads: number): Promise<string> {
  const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `shifts-${randomUUID()}`, ...body } });
  expect(created.status).toBe(201);
  const campaignId: string = created.body.campaign.id;
  const prefix = daytimePrefix();
  await seedLeads(app, tenant, campaignId, Array.from({ length: leads }, (_, i) => numberEnding(prefix, i, 80 + (i % 10))));
  const started = await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey, body: { tick_ms: 200, batch_size: 10, call_ttl_ms: 120_000 } });
  expect(started.status).toBe(200);
  return campaignId;
}

/** The run's tick counter, read from the workflow the campaign runs as. */
async function tickOf(tenant: ProvisionedTenant, campaignId: string): Promise<number> {
  return (await app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(tenant.tenantId, campaignId)).query(runStateQuery)).tick;
}

/** Waits until the run has ticked `n` more times: every line those ticks wanted has been dialed. */
async function ticksPass(tenant: ProvisionedTenant, campaignId: string, n: number): Promise<void> {
  const from = await tickOf(tenant, campaignId);
  await waitFor(async () => ((await tickOf(tenant, campaignId)) >= from + n ? true : undefined), 30_000, `${n} ticks of the run`);
}

/**
 * Enough agent-handled calls of the tenant, outside any campaign, for the measured horizons to
 * replace the defaults: answered `answerMs` after the dial, talked `talkMs`.
 */
async function handledHistory(tenant: ProvisionedTenant, agentId: string, answerMs: number, talkMs: number): Promise<void> {
  const [debt] = (
    await owner.query<{ id: string }>(`INSERT INTO debts (tenant_id, external_ref, consumer_ref, amount_cents) VALUES ($1, $2, 'history', 100) RETURNING id`, [
      tenant.tenantId,
      `history-${randomUUID()}`,
    ])
  ).rows;
  for (let i = 0; i < MIN_HANDLE_SAMPLES; i += 1) {
    const started = new Date(Date.now() - (i + 10) * MINUTE);
    const answered = new Date(started.getTime() + answerMs);
    const { rows } = await owner.query<{ id: string }>(
      `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, started_at, answered_at)
       VALUES ($1, $2, 'history', 'history', '+13035550199', $3, $4) RETURNING id`,
      [tenant.tenantId, debt!.id, started, answered],
    );
    await owner.query(
      `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, started_at, answered_at, ended_at, disposition, agent_id, corrects_id)
       VALUES ($1, $2, 'history', 'history', '+13035550199', $3, $4, $5, 'answered_human', $6, $7)`,
      [tenant.tenantId, debt!.id, started, answered, new Date(answered.getTime() + talkMs), agentId, rows[0]!.id],
    );
  }
}

async function stop(tenant: ProvisionedTenant, campaignId: string): Promise<void> {
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey })).status).toBe(200);
  for (const ch of rig.sim.channels()) rig.sim.remoteHangup(ch.uuid);
}

describe('the dial tick reads the planned shifts', () => {
  it('a run idle because its only seat is leaving wakes when the shift is cancelled', async () => {
    const tenant = await provisionTenant(app);
    const [seat] = await seatAgents(app, rig, tenant, 1);
    const shift = await plan(tenant, seat!, -HOUR, 2 * MINUTE);
    const campaignId = await startCampaign(tenant, { campaign_type: 'progressive' }, 3);
    try {
      // Nothing in flight and no seat: the run sleeps until the shift's end, when the seat may count again.
      const handle = app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(tenant.tenantId, campaignId));
      const waiting = await waitFor(async () => (await handle.query(runStateQuery)).waiting ?? undefined, 20_000, 'the run to wait');
      expect(waiting).toEqual({ kind: 'idle', at: shift.ends_at, reason: 'no_agent_capacity' });
      expect(await originals(tenant, campaignId)).toHaveLength(0);
      expect((await app.request('POST', `/v1/planned-shifts/${shift.id}/cancel`, { token: tenant.apiKey })).status).toBe(200);
      await waitFor(async () => ((await originals(tenant, campaignId)).length === 1 ? true : undefined), 20_000, 'the line once the cancel woke the run');
    } finally {
      await stop(tenant, campaignId);
    }
  });

  it('a run idle because its only seat is leaving wakes by itself when the shift ends and the seat is still there', async () => {
    const tenant = await provisionTenant(app);
    const [seat] = await seatAgents(app, rig, tenant, 1);
    // Measured: answered after the 5 s floor, talked 1 s. The edge is 6 s from now.
    await handledHistory(tenant, seat!, MIN_LEAD_MS, SECOND);
    const shift = await plan(tenant, seat!, -HOUR, 4 * SECOND);
    const endsAt = Date.parse(shift.ends_at);
    const capacity = await app.request('GET', '/v1/stats/capacity', { token: tenant.apiKey });
    expect(capacity.body.agents.now).toMatchObject({ lead_time_seconds: 5, handle_time_seconds: 1, leaving: 1 });
    const campaignId = await startCampaign(tenant, { campaign_type: 'progressive' }, 3);
    try {
      const first = await waitFor(async () => (await originals(tenant, campaignId))[0], 20_000, 'the line after the shift ended');
      // No line while the seat was on its way out; one right after the end, without any event.
      expect(Date.parse(first.started_at)).toBeGreaterThanOrEqual(endsAt);
    } finally {
      await stop(tenant, campaignId);
    }
  });

  it('dials no line for a seat whose shift ends within the handle time, and dials it again once the shift is cancelled', async () => {
    const tenant = await provisionTenant(app);
    const [, leaving] = await seatAgents(app, rig, tenant, 2);
    // Ends in 2 minutes: inside the default lead + handle time (15 s + 180 s), so no new call is lined up for it.
    const shift = await plan(tenant, leaving!, -HOUR, 2 * MINUTE);
    const capacity = await app.request('GET', '/v1/stats/capacity', { token: tenant.apiKey });
    expect(capacity.body.agents.now).toMatchObject({ dialable: 2, leaving: 1, arriving: 0 });

    const campaignId = await startCampaign(tenant, { campaign_type: 'progressive' }, 6);
    try {
      await waitFor(async () => ((await originals(tenant, campaignId)).length > 0 ? true : undefined), 30_000, 'the first call');
      await ticksPass(tenant, campaignId, 5);
      // Two seats available, one line: the seat on its way out got none.
      expect(await originals(tenant, campaignId)).toHaveLength(1);

      expect((await app.request('POST', `/v1/planned-shifts/${shift.id}/cancel`, { token: tenant.apiKey })).status).toBe(200);
      await waitFor(async () => ((await originals(tenant, campaignId)).length >= 2 ? true : undefined), 30_000, 'a line for the seat whose shift was cancelled');
      await ticksPass(tenant, campaignId, 5);
      expect(await originals(tenant, campaignId)).toHaveLength(2);
    } finally {
      await stop(tenant, campaignId);
    }
  });

  it('predictive with over-dial allowed dials ahead for an agent whose shift starts within the lead time, and not once the agent is late', async () => {
    const tenant = await provisionTenant(app);
    const patched = await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, {
      token: ADMIN_TOKEN,
      body: { abandon_seller_name: 'Acme Recovery', abandon_seller_phone: '+13035550100' },
    });
    expect(patched.status).toBe(200);
    const [seat] = await seatAgents(app, rig, tenant, 1);
    const coming = await app.request('POST', '/v1/agents', { token: tenant.apiKey, body: { name: 'Coming', email: uniqueEmail('coming'), sip_extension: `6${Date.now() % 10_000}` } });
    expect(coming.status).toBe(201);
    // The tenant's consumers answer 25 s after the dial: the lead the run dials ahead by. A shift
    // starting a second short of it leaves the run 24 s for its first tick, and the calls (45 s of
    // ringing) still ring when the shift has started.
    await handledHistory(tenant, seat!, LEAD_MS, MINUTE);
    const shift = await plan(tenant, coming.body.agent.id, LEAD_MS - SECOND, 8 * HOUR);
    const startsAt = Date.parse(shift.starts_at);

    // The ratio pinned at 1: one line per seat, the arriving agent's included.
    const campaignId = await startCampaign(tenant, { campaign_type: 'predictive', min_dial_ratio: 1, max_dial_ratio: 1 }, 6);
    try {
      const first = await waitFor(async () => (await originals(tenant, campaignId))[0], 30_000, 'the first call');
      if (Date.parse(first.started_at) >= startsAt) throw new Error('the run dialed only after the shift started: the machine is too slow for this test');
      await waitFor(async () => ((await originals(tenant, campaignId)).length >= 2 ? true : undefined), 30_000, 'the line for the arriving agent');
      const lines = await originals(tenant, campaignId);
      expect(lines).toHaveLength(2);
      expect(lines.every((o) => Date.parse(o.started_at) < startsAt)).toBe(true);

      // The shift has started and the agent never came: no line for them any more.
      await waitFor(() => Promise.resolve(Date.now() > startsAt + SECOND ? true : undefined), 30_000, 'the shift start');
      await ticksPass(tenant, campaignId, 5);
      expect(await originals(tenant, campaignId)).toHaveLength(2);
      const capacity = await app.request('GET', '/v1/stats/capacity', { token: tenant.apiKey });
      expect(capacity.body.agents.now).toMatchObject({ planned: 1, planned_present: 0, arriving: 0, lead_time_seconds: 25 });
    } finally {
      await stop(tenant, campaignId);
    }
  });
});
