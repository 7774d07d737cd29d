import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { withTenant } from '../../src/lib/tenancy';
import { evaluate } from '../../src/modules/compliance/compliance.service';
import type { DecisionRequest } from '../../src/modules/compliance/compliance.types';
import { daytimePrefix, numberEnding, runWorker, seatAgents, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, uniqueName, type ProvisionedTenant, type TestApp } from '../helpers/harness';

/**
 * Issue 16 audit findings not covered end to end elsewhere, each driven from the facts' real
 * writers: the import route, a trunk's status, manual dials through POST /v1/campaigns/{id}/dial on
 * the switch simulator over TCP, the agent's disposition route and the SMS route. Nothing here
 * writes a fact's column; the engine is asked directly only where the finding is about a moment
 * the suite cannot wait for.
 */

jest.setTimeout(180_000);

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `compliance-findings-${randomUUID()}`;
let serial = Math.floor(Math.random() * 50);

const HUMAN = 10;
const BUSY = 70;

beforeAll(async () => {
  rig = await startSwitchRig({ ringMs: 100, talkMs: 1500 });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, SMS_PROVIDER_ADAPTER: 'mock' }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});

const actor = { type: 'system', id: null };

async function importDebt(tenant: ProvisionedTenant, item: Record<string, unknown>): Promise<{ debtId: string; ref: string }> {
  const ref = (item.external_ref as string | undefined) ?? uniqueName('finding');
  const res = await app.request('POST', '/v1/debts/import', { token: tenant.apiKey, body: { debts: [{ external_ref: ref, consumer_ref: `c-${ref}`, ...item }] } });
  expect(res.status).toBe(200);
  expect(res.body.failed).toEqual([]);
  const found = await app.request('GET', `/v1/debts?external_ref=${encodeURIComponent(ref)}`, { token: tenant.apiKey });
  return { debtId: found.body.debts[0].id, ref };
}

async function decide(tenant: ProvisionedTenant, request: Partial<DecisionRequest> & { debtId: string; phone: string }, now = new Date()) {
  const [d] = await evaluate(app.deps, tenant.tenantId, [{ campaignId: null, channel: 'voice', initiation: 'automated', artificialVoice: false, ...request }], { actor, now });
  return d!;
}

async function manualCampaign(tenant: ProvisionedTenant, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: uniqueName('finding'), campaign_type: 'manual', amd_enabled: false, ...extra } });
  expect(created.status).toBe(201);
  const id: string = created.body.campaign.id;
  expect((await app.request('POST', `/v1/campaigns/${id}/start`, { token: tenant.apiKey, body: {} })).status).toBe(200);
  return id;
}

const dial = (tenant: ProvisionedTenant, campaignId: string, debtId: string) =>
  app.request('POST', `/v1/campaigns/${campaignId}/dial`, { token: tenant.apiKey, body: { debt_id: debtId } });

async function finalRow(tenant: ProvisionedTenant, callAttemptId: string, ended = true) {
  return waitFor(
    async () => {
      const res = await app.request('GET', `/v1/call_attempts?limit=1000`, { token: tenant.apiKey });
      return (res.body.call_attempts as any[]).find((r) => r.corrects_id === callAttemptId && (!ended || r.ended_at !== null));
    },
    30_000,
    'the final row of the call',
  );
}

/** The next hour at which it is noon in the zone. */
function nextNoon(zone: string): Date {
  let at = DateTime.now().setZone(zone).startOf('hour').plus({ hours: 1 });
  while (at.hour !== 12) at = at.plus({ hours: 1 });
  return at.toJSDate();
}

describe('a number nothing places anywhere', () => {
  it('gets every state and city cap (the strictest binds), where a number placed in Colorado gets none', async () => {
    const tenant = await provisionTenant(app);
    // A toll-free number has no area-code state; the contact's zone makes it resolvable for quiet hours.
    const tollFree = `+1888555${String(1000 + (serial += 1)).slice(-4)}`;
    const denver = `+1303555${String(1000 + (serial += 1)).slice(-4)}`;
    const nowhere = await importDebt(tenant, { prior_attempts_7d: 2, contacts: [{ phone_e164: tollFree, timezone: 'America/Denver', is_primary: true }] });
    const colorado = await importDebt(tenant, { prior_attempts_7d: 2, contacts: [{ phone_e164: denver, is_primary: true }] });
    const noon = nextNoon('America/Denver');

    const capped = await decide(tenant, { debtId: nowhere.debtId, phone: tollFree }, noon);
    expect({ gate: capped.gate, decided: capped.decisionId !== null }).toEqual({ gate: 'state_limit', decided: true });
    expect(capped.reason).toContain('MA-940CMR7.04');
    expect((await decide(tenant, { debtId: colorado.debtId, phone: denver }, noon)).allowed).toBe(true);
  });
});

describe('a line type belongs to the number', () => {
  it('an import reclassifying a shared number on one debt changes what the policy decides for the other debt', async () => {
    const tenant = await provisionTenant(app);
    const policy = await app.request('PUT', '/v1/compliance-policy', { token: tenant.apiKey, body: { allowed_line_types: ['mobile'] } });
    expect(policy.status).toBe(200);
    const phone = `+1303555${String(1000 + (serial += 1)).slice(-4)}`;
    const first = await importDebt(tenant, { contacts: [{ phone_e164: phone, line_type: 'mobile', is_primary: true }] });
    await importDebt(tenant, { contacts: [{ phone_e164: phone, line_type: 'mobile', is_primary: true }] });
    const noon = nextNoon('America/Denver');
    expect((await decide(tenant, { debtId: first.debtId, phone }, noon)).allowed).toBe(true);

    // The number is ported to a landline, learned through another debt's import.
    await importDebt(tenant, { contacts: [{ phone_e164: phone, line_type: 'landline', is_primary: true }] });
    const refused = await decide(tenant, { debtId: first.debtId, phone }, noon);
    expect(refused.gate).toBe('tenant_policy');
    expect(refused.reason).toContain('landline');
  });
});

describe('what counts as a placed call', () => {
  it('a dial the switch never took (disabled trunk, not_placed on the final row) does not count toward 7-in-7; a busy call does', async () => {
    const tenant = await provisionTenant(app);
    await seatAgents(app, rig, tenant, 1);
    const carrier = await app.request('POST', '/v1/carriers', { token: tenant.apiKey, body: { kind: 'byoc', name: uniqueName('trunk'), sip_proxy: '8.20.247.10:5060' } });
    expect(carrier.status).toBe(201);
    const trunked = await manualCampaign(tenant, { carrier: carrier.body.carrier.id });
    const plain = await manualCampaign(tenant);
    const phone = numberEnding(daytimePrefix(), (serial += 1), BUSY);
    const { debtId, ref } = await importDebt(tenant, { campaign_id: trunked, prior_attempts_7d: 6, contacts: [{ phone_e164: phone, is_primary: true }] });

    const disabled = await app.request('PATCH', `/v1/carriers/${carrier.body.carrier.id}`, { token: tenant.apiKey, body: { status: 'disabled' } });
    expect(disabled.status).toBe(200);
    const never = await dial(tenant, trunked, debtId);
    expect(never.status).toBe(409);
    expect(never.body.error.message).toContain('TRUNK_DISABLED');
    const neverFinal = await finalRow(tenant, never.body.error.call_id, false);
    expect(neverFinal.disposition).toBe('not_placed');
    // Six reported calls and a call never placed: a seventh may go out.
    const afterNever = await decide(tenant, { debtId, phone });
    expect(afterNever.checks.find((c) => c.gate === 'regf_7in7')!.outcome).toBe('pass');

    // The same debt in a campaign on the deployment's gateway: a busy line reached the number's network.
    const moved = await app.request('POST', '/v1/debts/import', { token: tenant.apiKey, body: { debts: [{ external_ref: ref, consumer_ref: `c-${ref}`, campaign_id: plain }] } });
    expect(moved.body.failed).toEqual([]);
    const busy = await dial(tenant, plain, debtId);
    expect(busy.body.status).toBe('dialing');
    expect((await finalRow(tenant, busy.body.call_id)).disposition).toBe('busy');
    const next = await dial(tenant, plain, debtId);
    expect(next.body).toEqual({ status: 'blocked', reason: 'regf_7in7', decision_id: expect.any(String) });
  });
});

describe('what an agent hears on a live call lands on the number', () => {
  async function talkedTo(tenant: ProvisionedTenant) {
    const [agentId] = await seatAgents(app, rig, tenant, 1);
    const campaignId = await manualCampaign(tenant);
    const phone = numberEnding(daytimePrefix(), (serial += 1), HUMAN);
    const { debtId } = await importDebt(tenant, { campaign_id: campaignId, contacts: [{ phone_e164: phone, is_primary: true }] });
    const placed = await dial(tenant, campaignId, debtId);
    expect(placed.body.status).toBe('dialing');
    const final = await finalRow(tenant, placed.body.call_id);
    expect(final).toMatchObject({ disposition: 'answered_human', agent_id: agentId });
    await waitFor(
      async () => ((await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.agent.findUniqueOrThrow({ where: { id: agentId! } }))).presence === 'available' ? true : undefined),
      10_000,
      'the agent free again',
    );
    return { agentId: agentId!, campaignId, phone, debtId, callAttemptId: placed.body.call_attempt.id as string };
  }

  /** What the decision behind a refused dial found at one gate (its evidence on the audit chain). */
  async function gateOutcome(tenant: ProvisionedTenant, decisionId: string, gate: string): Promise<string | undefined> {
    const entry = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findUniqueOrThrow({ where: { id: decisionId } }));
    return (entry.payload as { checks: Array<{ gate: string; outcome: string }> }).checks.find((c) => c.gate === gate)?.outcome;
  }

  const textTo = (tenant: ProvisionedTenant, debtId: string, to: string) =>
    app.request('POST', '/v1/sms/messages', { token: tenant.apiKey, body: { to, debt_id: debtId, body: 'Please call us back. Reply STOP to opt out.' } });

  it('wrong_number: the number is listed and neither dialed nor texted again', async () => {
    const tenant = await provisionTenant(app);
    const call = await talkedTo(tenant);
    const disposed = await app.request('POST', `/v1/call_attempts/${call.callAttemptId}/disposition`, {
      token: tenant.apiKey,
      body: { disposition: 'wrong_number', agent_id: call.agentId },
    });
    expect(disposed.status).toBe(201);
    const next = await dial(tenant, call.campaignId, call.debtId);
    expect(next.body).toEqual({ status: 'blocked', reason: 'consent_revoked', decision_id: expect.any(String) });
    expect(await gateOutcome(tenant, next.body.decision_id, 'dnc_listed')).toBe('block');
    const text = await textTo(tenant, call.debtId, call.phone);
    expect(text.status).toBe(422);
    expect(text.body.error).toMatchObject({ code: 'compliance_blocked', gate: 'consent_revoked', decision_id: expect.any(String) });
  });

  it('a revocation spoken to the agent: the number is no longer called', async () => {
    const tenant = await provisionTenant(app);
    const call = await talkedTo(tenant);
    const disposed = await app.request('POST', `/v1/call_attempts/${call.callAttemptId}/disposition`, {
      token: tenant.apiKey,
      body: { disposition: 'revoked_consent', agent_id: call.agentId },
    });
    expect(disposed.status).toBe(201);
    const next = await dial(tenant, call.campaignId, call.debtId);
    expect(next.body).toEqual({ status: 'blocked', reason: 'consent_revoked', decision_id: expect.any(String) });
    expect(await gateOutcome(tenant, next.body.decision_id, 'dnc_listed')).toBe('block');
  });
});
