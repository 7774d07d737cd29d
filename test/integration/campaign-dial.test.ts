import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { REDIAL_AFTER_MS } from '../../src/modules/dialer/dial-tick.service';
import { daytimePrefix, numberEnding, runWorker, seatAgents, seedLeads, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `dial-manual-${randomUUID()}`;
// Long enough that a second request reliably finds the first call still in progress.
const TALK_MS = 1500;

beforeAll(async () => {
  rig = await startSwitchRig({ talkMs: TALK_MS });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

let serial = 0;
/** A destination in a zone where it is daytime now, whose last two digits pick the simulator's outcome. */
const phoneEnding = (lastTwo: number) => numberEnding(daytimePrefix(), (serial += 1), lastTwo);
const HUMAN = 10;
const BUSY = 72;

async function createCampaign(tenant: ProvisionedTenant, campaignType: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `dial-${randomUUID()}`, campaign_type: campaignType, ...extra } });
  expect(res.status).toBe(201);
  return res.body.campaign.id;
}

async function runningCampaign(tenant: ProvisionedTenant, campaignType = 'manual', extra: Record<string, unknown> = {}): Promise<string> {
  const id = await createCampaign(tenant, campaignType, extra);
  const started = await app.request('POST', `/v1/campaigns/${id}/start`, { token: tenant.apiKey });
  expect(started.status).toBe(200);
  return id;
}

const dial = (token: string | null, campaignId: string, body: unknown, on: TestApp = app) =>
  on.request('POST', `/v1/campaigns/${campaignId}/dial`, { token, body });

/** What the engine and the dialer recorded about a debt. */
async function recordedFor(tenant: ProvisionedTenant, debtId: string) {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => ({
    decisions: await tx.auditLog.count({ where: { action: 'compliance.decision', subjectId: debtId } }),
    attempts: await tx.callAttempt.count({ where: { debtId } }),
  }));
}

async function finalRow(tenant: ProvisionedTenant, callAttemptId: string) {
  return waitFor(
    async () => {
      const res = await app.request('GET', `/v1/call_attempts?limit=1000`, { token: tenant.apiKey });
      return (res.body.call_attempts as any[]).find((r) => r.corrects_id === callAttemptId && r.ended_at !== null);
    },
    30_000,
    'the final row of the call',
  );
}

async function setLimits(tenant: ProvisionedTenant, limits: { max_cps?: number | null; max_concurrent_channels?: number | null }) {
  const res = await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN, body: limits });
  expect(res.status).toBe(200);
}

const agentPresence = (tenant: ProvisionedTenant, agentId: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.findUniqueOrThrow({ where: { id: agentId } })).then((a) => a.presence);

describe('POST /v1/campaigns/{id}/dial', () => {
  it('dials the primary contact, bridges the named agent and finishes answered_human with that agent', async () => {
    const tenant = await provisionTenant(app);
    const [first, named] = await seatAgents(app, rig, tenant, 2);
    const campaignId = await runningCampaign(tenant, 'manual', { caller_ids: ['+13035550100'] });
    const phone = phoneEnding(HUMAN);
    const [debtId, otherDebt] = await seedLeads(app, tenant, campaignId, [phone, phoneEnding(HUMAN)]);

    const before = Date.now();
    const res = await dial(tenant.apiKey, campaignId, { debt_id: debtId, agent_id: named });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'dialing', call_id: expect.any(String), call_attempt: expect.any(Object) });
    const attempt = res.body.call_attempt;
    expect(attempt).toMatchObject({
      id: res.body.call_id,
      call_uuid: res.body.call_id,
      debt_id: debtId,
      campaign_id: campaignId,
      agent_id: named,
      to_number: phone,
      from_number: '+13035550100',
      corrects_id: null,
      ended_at: null,
      compliance_snapshot: { allowed: true, gate: null, decision_id: expect.any(String) },
    });

    // The decision is on the audit chain with the caller as actor, and the debt rests like after a dial of the loop.
    const decision = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findUniqueOrThrow({ where: { id: attempt.compliance_snapshot.decision_id } }));
    expect(decision).toMatchObject({ action: 'compliance.decision', actorType: 'api_key', subjectId: debtId });
    expect(decision.payload).toMatchObject({ allowed: true, initiation: 'human', campaign_id: campaignId });
    const debt = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findUniqueOrThrow({ where: { id: debtId } }));
    expect(debt.nextDialableAt!.getTime()).toBeGreaterThanOrEqual(before + REDIAL_AFTER_MS);

    // While the call is up: the same debt is not dialed twice, and the named agent's seat is taken.
    expectError(await dial(tenant.apiKey, campaignId, { debt_id: debtId }), 409, 'conflict');
    await waitFor(async () => ((await agentPresence(tenant, named!)) === 'on_call' ? true : undefined), 10_000, 'the named agent on the call');
    expect(await agentPresence(tenant, first!)).toBe('available');
    const busySeat = await dial(tenant.apiKey, campaignId, { debt_id: otherDebt, agent_id: named });
    expectError(busySeat, 409, 'conflict');
    expect(await recordedFor(tenant, otherDebt!)).toEqual({ decisions: 0, attempts: 0 });

    const final = await finalRow(tenant, attempt.id);
    expect(final).toMatchObject({ disposition: 'answered_human', agent_id: named, hangup_cause: 'NORMAL_CLEARING', sip_response_code: 200 });
    expect(final.answered_at).not.toBeNull();
    await waitFor(async () => ((await agentPresence(tenant, named!)) === 'available' ? true : undefined), 10_000, 'the agent free again');

    const call = await app.request('GET', `/v1/calls/${res.body.call_id}`, { token: tenant.apiKey });
    expect(call.status).toBe(200);
    expect(call.body.call).toMatchObject({ id: attempt.id, agent_id: named });
  });

  it('dials another contact of the debt when phone names it, on a preview campaign, with any available agent', async () => {
    const tenant = await provisionTenant(app);
    await seatAgents(app, rig, tenant, 1);
    const campaignId = await runningCampaign(tenant, 'preview');
    const [debtId] = await seedLeads(app, tenant, campaignId, [phoneEnding(HUMAN)]);
    const second = phoneEnding(BUSY);
    await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debtId!, phoneE164: second } });
      await tx.consent.create({ data: { tenantId: tenant.tenantId, debtId: debtId!, phoneE164: second, channel: 'voice', source: 'import' } });
    });

    const res = await dial(tenant.apiKey, campaignId, { debt_id: debtId, phone: second, agent_id: null });
    expect(res.status).toBe(200);
    expect(res.body.call_attempt).toMatchObject({ to_number: second, agent_id: null, from_number: null });
    const final = await finalRow(tenant, res.body.call_id);
    expect(final).toMatchObject({ disposition: 'busy', hangup_cause: 'USER_BUSY', sip_response_code: 486 });
  });

  it('answers 200 blocked with the gate and the recorded decision when the engine refuses, and dials nothing', async () => {
    const tenant = await provisionTenant(app);
    await seatAgents(app, rig, tenant, 1);
    const campaignId = await runningCampaign(tenant);
    const listed = phoneEnding(HUMAN);
    const [dncDebt] = await seedLeads(app, tenant, campaignId, [listed]);
    const noConsentDebt = await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      await tx.dncEntry.create({ data: { tenantId: tenant.tenantId, phoneE164: listed, source: 'api' } });
      const debt = await tx.debt.create({ data: { tenantId: tenant.tenantId, campaignId, externalRef: `nc-${randomUUID()}`, consumerRef: 'no-consent' } });
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phoneEnding(HUMAN), isPrimary: true } });
      return debt.id;
    });

    for (const [debtId, gate] of [
      [dncDebt!, 'dnc_listed'],
      [noConsentDebt, 'tcpa_no_consent'],
    ] as const) {
      const res = await dial(tenant.apiKey, campaignId, { debt_id: debtId });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'blocked', reason: gate, decision_id: expect.any(String) });
      const decision = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findUniqueOrThrow({ where: { id: res.body.decision_id } }));
      expect(decision).toMatchObject({ action: 'compliance.decision', actorType: 'api_key', subjectId: debtId });
      expect(decision.payload).toMatchObject({ allowed: false, gate, initiation: 'human' });
      expect(await recordedFor(tenant, debtId)).toEqual({ decisions: 1, attempts: 0 });
      const debt = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findUniqueOrThrow({ where: { id: debtId } }));
      expect(debt.nextDialableAt).toBeNull();
    }
  });

  it('answers 429 throttled at the tenant max_cps, recording nothing, and dials once the second has passed', async () => {
    const tenant = await provisionTenant(app);
    await seatAgents(app, rig, tenant, 1);
    await setLimits(tenant, { max_cps: 1 });
    const campaignId = await runningCampaign(tenant);
    const [a, b] = await seedLeads(app, tenant, campaignId, [phoneEnding(BUSY), phoneEnding(BUSY)]);

    expect((await dial(tenant.apiKey, campaignId, { debt_id: a })).status).toBe(200);
    const braked = await dial(tenant.apiKey, campaignId, { debt_id: b });
    expectError(braked, 429, 'throttled');
    expect(braked.headers['retry-after']).toBeUndefined();
    expect(await recordedFor(tenant, b!)).toEqual({ decisions: 0, attempts: 0 });

    const later = await waitFor(async () => {
      const res = await dial(tenant.apiKey, campaignId, { debt_id: b });
      return res.status === 429 ? undefined : res;
    }, 10_000, 'the brake to release');
    expect(later.status).toBe(200);
    expect(await recordedFor(tenant, b!)).toEqual({ decisions: 1, attempts: 1 });
  });

  it('answers 429 throttled while max_concurrent_channels calls are in flight', async () => {
    const tenant = await provisionTenant(app);
    await seatAgents(app, rig, tenant, 2);
    await setLimits(tenant, { max_concurrent_channels: 1 });
    const campaignId = await runningCampaign(tenant);
    const [a, b] = await seedLeads(app, tenant, campaignId, [phoneEnding(HUMAN), phoneEnding(BUSY)]);

    const first = await dial(tenant.apiKey, campaignId, { debt_id: a });
    expect(first.status).toBe(200);
    expectError(await dial(tenant.apiKey, campaignId, { debt_id: b }), 429, 'throttled');
    expect(await recordedFor(tenant, b!)).toEqual({ decisions: 0, attempts: 0 });

    await finalRow(tenant, first.body.call_id);
    expect((await dial(tenant.apiKey, campaignId, { debt_id: b })).status).toBe(200);
  });

  it('refuses what it cannot dial before deciding anything', async () => {
    const tenant = await provisionTenant(app);
    const campaignId = await runningCampaign(tenant);
    const otherCampaign = await createCampaign(tenant, 'manual');
    const [debtId] = await seedLeads(app, tenant, campaignId, [phoneEnding(HUMAN)]);
    const [foreignDebt] = await seedLeads(app, tenant, otherCampaign, [phoneEnding(HUMAN)]);
    const other = await provisionTenant(app);
    const otherTenantCampaign = await runningCampaign(other);
    const [otherTenantDebt] = await seedLeads(app, other, otherTenantCampaign, [phoneEnding(HUMAN)]);

    // No agent on a seat: an answered consumer would only hear the abandonment message.
    expectError(await dial(tenant.apiKey, campaignId, { debt_id: debtId }), 409, 'conflict');
    await seatAgents(app, rig, tenant, 1);

    expectError(await dial(null, campaignId, { debt_id: debtId }), 401, 'unauthorized');
    for (const id of [randomUUID(), 'not-a-uuid', otherTenantCampaign]) {
      expectError(await dial(tenant.apiKey, id, { debt_id: debtId }), 404, 'not_found');
    }
    expectError(await dial(tenant.apiKey, await createCampaign(tenant, 'progressive'), { debt_id: debtId }), 409, 'conflict');
    expectError(await dial(tenant.apiKey, otherCampaign, { debt_id: foreignDebt }), 409, 'conflict');
    const paused = await runningCampaign(tenant, 'preview');
    expect((await app.request('POST', `/v1/campaigns/${paused}/pause`, { token: tenant.apiKey })).status).toBe(200);
    expectError(await dial(tenant.apiKey, paused, { debt_id: debtId }), 409, 'conflict');

    for (const id of [randomUUID(), 'nope', otherTenantDebt]) {
      expectError(await dial(tenant.apiKey, campaignId, { debt_id: id }), 404, 'not_found');
    }
    expectError(await dial(tenant.apiKey, campaignId, { debt_id: foreignDebt }), 422, 'unprocessable');
    expectError(await dial(tenant.apiKey, campaignId, { debt_id: debtId, phone: '+13035550999' }), 422, 'unprocessable');
    expectError(await dial(tenant.apiKey, campaignId, { debt_id: debtId, agent_id: randomUUID() }), 422, 'unprocessable');
    // The tenant's admin agent has no sip_extension to bridge.
    expectError(await dial(tenant.apiKey, campaignId, { debt_id: debtId, agent_id: tenant.adminAgentId }), 422, 'unprocessable');
    const [otherAgent] = await seatAgents(app, rig, other, 1);
    expectError(await dial(tenant.apiKey, campaignId, { debt_id: debtId, agent_id: otherAgent }), 422, 'unprocessable');

    for (const body of [
      { debt_id: debtId, extra: true },
      { debt_id: debtId, phone: '303-555-0100' },
      { debt_id: debtId, agent_id: 'someone' },
      { phone: '+13035550100' },
      { debt_id: 42 },
    ]) {
      const res = await dial(tenant.apiKey, campaignId, body);
      expectError(res, 400, 'bad_request');
    }
    expect((await dial(tenant.apiKey, campaignId, { debt_id: debtId, extra: true })).body.error.message).toContain("'extra'");

    expect(await recordedFor(tenant, debtId!)).toEqual({ decisions: 0, attempts: 0 });
    expect(await recordedFor(tenant, foreignDebt!)).toEqual({ decisions: 0, attempts: 0 });
  });

  it('answers 503 esl_unavailable without a switch link, recording nothing', async () => {
    const tenant = await provisionTenant(app);
    await seatAgents(app, rig, tenant, 1);
    const campaignId = await runningCampaign(tenant);
    const [debtId] = await seedLeads(app, tenant, campaignId, [phoneEnding(HUMAN)]);

    const noLink = await startTestApp();
    const downRig = await startSwitchRig();
    const downApp = await startTestApp({}, { esl: downRig.esl });
    try {
      expectError(await dial(tenant.apiKey, campaignId, { debt_id: debtId }, noLink), 503, 'esl_unavailable');
      await downRig.sim.stop();
      await waitFor(() => Promise.resolve(downRig.esl.isUp() ? undefined : true), 10_000, 'the link to notice the switch is gone');
      expectError(await dial(tenant.apiKey, campaignId, { debt_id: debtId }, downApp), 503, 'esl_unavailable');
    } finally {
      await noLink.close();
      await downApp.close();
      await downRig.esl.close();
    }
    expect(await recordedFor(tenant, debtId!)).toEqual({ decisions: 0, attempts: 0 });
    // The link up again (this app's): the same request dials.
    expect((await dial(tenant.apiKey, campaignId, { debt_id: debtId })).status).toBe(200);
  });
});
