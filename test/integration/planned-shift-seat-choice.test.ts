import { randomUUID } from 'node:crypto';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `seat-choice-${randomUUID()}`;

// Consumers answer after 100 ms and hang up 2.5 s after answering; agent legs answer at once. The
// default 400 ms on the line was the whole time an agent had to be bridged, and a loaded CI machine
// took longer (answer to bridge p90 449 ms): a consumer who hangs up first ends the call without an agent.
beforeAll(async () => {
  rig = await startSwitchRig({ talkMs: 2500 });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});

interface Row {
  id: string;
  corrects_id: string | null;
  agent_id: string | null;
  ended_at: string | null;
}

/** The agent each ended call of the campaign was bridged to, by the call's final CDR row. */
async function agentsOfEndedCalls(tenant: ProvisionedTenant, campaignId: string): Promise<Array<string | null>> {
  const res = await app.request('GET', `/v1/call_attempts?campaign_id=${campaignId}&limit=1000`, { token: tenant.apiKey });
  expect(res.status).toBe(200);
  return (res.body.call_attempts as Row[]).filter((r) => r.corrects_id !== null && r.ended_at !== null).map((r) => r.agent_id);
}

async function planShift(tenant: ProvisionedTenant, agentId: string, fromNowMs: number, toNowMs: number): Promise<void> {
  const res = await app.request('POST', '/v1/planned-shifts', {
    token: tenant.apiKey,
    body: { agent_id: agentId, starts_at: new Date(Date.now() + fromNowMs).toISOString(), ends_at: new Date(Date.now() + toNowMs).toISOString() },
  });
  expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
}

async function runCampaign(tenant: ProvisionedTenant, body: Record<string, unknown>, leads: number): Promise<string> {
  const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `seat-choice-${randomUUID()}`, ...body } });
  expect(created.status).toBe(201);
  const campaignId: string = created.body.campaign.id;
  const prefix = daytimePrefix();
  // Last two digits 10-49: a person answers every call.
  await seedLeads(app, tenant, campaignId, Array.from({ length: leads }, (_, i) => numberEnding(prefix, i, 10 + i)));
  const started = await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey, body: { tick_ms: 200, batch_size: 10, call_ttl_ms: 60_000 } });
  expect(started.status).toBe(200);
  return campaignId;
}

async function stop(tenant: ProvisionedTenant, campaignId: string): Promise<void> {
  expect((await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey })).status).toBe(200);
}

describe('an answered call chooses its seat by the planned shifts', () => {
  it('goes to the seat that stays rather than the one whose shift ends within the horizon, call after call', async () => {
    const tenant = await provisionTenant(app);
    // Both seats available and registered. The leaving one checked in first: the longest idle,
    // which the claim would take first without the plan, and again after each call of the other.
    const [leaving, staying] = await seatAgents(app, rig, tenant, 2);
    // Ends in 2 minutes: inside the default lead + handle time (15 s + 180 s).
    await planShift(tenant, leaving!, -HOUR, 2 * MINUTE);
    const capacity = await app.request('GET', '/v1/stats/capacity', { token: tenant.apiKey });
    expect(capacity.body.agents.now).toMatchObject({ dialable: 2, leaving: 1 });

    const campaignId = await runCampaign(tenant, { campaign_type: 'progressive' }, 3);
    try {
      const agents = await waitFor(async () => {
        const ended = await agentsOfEndedCalls(tenant, campaignId);
        return ended.length === 3 ? ended : undefined;
      }, 60_000, 'three answered calls to end');
      expect(agents).toEqual([staying, staying, staying]);
    } finally {
      await stop(tenant, campaignId);
    }
  });

  it('still takes the leaving seat when it is the only one free: an answer is never abandoned for the plan', async () => {
    const tenant = await provisionTenant(app);
    const patched = await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, {
      token: ADMIN_TOKEN,
      body: { abandon_seller_name: 'Acme Recovery', abandon_seller_phone: '+13035550100' },
    });
    expect(patched.status).toBe(200);
    const [leaving, staying] = await seatAgents(app, rig, tenant, 2);
    await planShift(tenant, leaving!, -HOUR, 2 * MINUTE);

    // Predictive at a pinned ratio of 2: two lines for the one seat pacing counts, both answered
    // together; the second answer finds only the leaving seat free.
    const campaignId = await runCampaign(tenant, { campaign_type: 'predictive', min_dial_ratio: 2, max_dial_ratio: 2, amd_enabled: false }, 2);
    try {
      const agents = await waitFor(async () => {
        const ended = await agentsOfEndedCalls(tenant, campaignId);
        return ended.length === 2 ? ended : undefined;
      }, 60_000, 'both answered calls to end');
      expect([...agents].sort()).toEqual([leaving, staying].sort());
    } finally {
      await stop(tenant, campaignId);
    }
  });
});
