import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { evaluate } from '../../src/modules/compliance/compliance.service';
import type { DecisionRequest } from '../../src/modules/compliance/compliance.types';
import { daytimePrefix, numberEnding, runWorker, seatAgents, startSwitchRig, waitFor, type RunningWorker, type SwitchRig } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

/**
 * The audit findings of issue 16, each driven from the facts' real writers (the import route, the
 * reassigned-numbers import, the SMS send route, a live call on the simulator): nothing here
 * writes a fact's column. The clock is injected into the engine where the finding is about time.
 */

jest.setTimeout(120_000);

let rig: SwitchRig;
let app: TestApp;
let worker: RunningWorker;
const taskQueue = `compliance-facts-${randomUUID()}`;
let serial = Math.floor(Math.random() * 50);

beforeAll(async () => {
  rig = await startSwitchRig({ talkMs: 60_000 });
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue }, { esl: rig.esl });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
  await rig?.close();
});

const actor = { type: 'system', id: null };
const IN_FORCE_NOON_NY = new Date('2026-10-20T16:00:00Z');

async function importDebts(tenant: ProvisionedTenant, debts: Record<string, unknown>[]) {
  const res = await app.request('POST', '/v1/debts/import', { token: tenant.apiKey, body: { debts } });
  expect(res.status).toBe(200);
  expect(res.body.failed).toEqual([]);
  const ids: string[] = [];
  for (const d of debts) {
    const found = await app.request('GET', `/v1/debts?external_ref=${encodeURIComponent(String(d.external_ref))}`, { token: tenant.apiKey });
    ids.push(found.body.debts[0].id);
  }
  return ids;
}

async function decideAt(tenant: ProvisionedTenant, request: Partial<DecisionRequest> & { debtId: string; phone: string }, now: Date) {
  const [decision] = await evaluate(app.deps, tenant.tenantId, [{ campaignId: null, channel: 'voice', initiation: 'automated', artificialVoice: false, ...request }], { actor, now });
  return decision!;
}

describe('facts the gates read come from real events', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  it('an NYC address on one contact caps the consumer’s other number', async () => {
    const ref = `nyc-${randomUUID()}`;
    const other = '+13105550142'; // Los Angeles: no cap of its own
    const [debtId] = await importDebts(tenant, [
      {
        external_ref: ref,
        consumer_ref: `c-${ref}`,
        prior_attempts_7d: 3,
        contacts: [
          { phone_e164: '+12125550142', postal_code: '10001', is_primary: true },
          { phone_e164: other },
        ],
      },
    ]);
    const d = await decideAt(tenant, { debtId: debtId!, phone: other }, new Date('2026-10-20T20:00:00Z'));
    expect(d.gate).toBe('state_limit');
    expect(d.reason).toContain('NYC-6RCNY5-77');
    expect(d.decisionId).toBeTruthy();
  });

  it('keeps the state of a postal code beside a stated one', async () => {
    const ref = `ma-${randomUUID()}`;
    const phone = '+13105550143';
    const [debtId] = await importDebts(tenant, [
      { external_ref: ref, consumer_ref: `c-${ref}`, prior_attempts_7d: 2, contacts: [{ phone_e164: phone, us_state: 'NH', postal_code: '02108', is_primary: true }] },
    ]);
    const d = await decideAt(tenant, { debtId: debtId!, phone }, new Date('2026-10-20T20:00:00Z'));
    expect(d.gate).toBe('state_limit');
    expect(d.reason).toContain('MA-940CMR7.04');
  });

  it('a 2023 disconnection refuses a 2026 import whose consent was given in 2020, and one whose consent date is unknown', async () => {
    const ref = `rnd-${randomUUID()}`;
    const given = '+13125550144';
    const unknown = '+13125550145';
    const later = '+13125550146';
    const [debtId] = await importDebts(tenant, [
      {
        external_ref: ref,
        consumer_ref: `c-${ref}`,
        contacts: [
          { phone_e164: given, consent_given_on: '2020-05-01', is_primary: true },
          { phone_e164: unknown },
          { phone_e164: later, consent_given_on: '2024-02-01' },
        ],
      },
    ]);
    const csv = `${given},2023-03-01\n${unknown},2023-03-01\n${later},2023-03-01\n`;
    const res = await app.request('POST', '/v1/reassigned-numbers/import', { token: tenant.apiKey, rawBody: csv, headers: { 'content-type': 'text/csv' } });
    expect(res.status).toBe(200);
    const noon = new Date('2026-10-20T17:00:00Z');
    const refused = await decideAt(tenant, { debtId: debtId!, phone: given }, noon);
    expect(refused.gate).toBe('number_reassigned');
    expect(refused.reason).toContain('2020-05-01');
    expect((await decideAt(tenant, { debtId: debtId!, phone: unknown }, noon)).gate).toBe('number_reassigned');
    expect((await decideAt(tenant, { debtId: debtId!, phone: later }, noon)).allowed).toBe(true);
  });

  it('judges an 808 number in Honolulu even with a New York contact zone', async () => {
    const ref = `hi-${randomUUID()}`;
    const phone = '+18085550147';
    const [debtId] = await importDebts(tenant, [{ external_ref: ref, consumer_ref: `c-${ref}`, contacts: [{ phone_e164: phone, timezone: 'America/New_York', is_primary: true }] }]);
    // 12:00 in New York, 06:00 in Honolulu.
    const d = await decideAt(tenant, { debtId: debtId!, phone }, new Date('2026-10-20T16:00:00Z'));
    expect(d.gate).toBe('quiet_hours');
    expect(d.zones).toEqual(['America/New_York', 'Pacific/Honolulu']);
    expect((await decideAt(tenant, { debtId: debtId!, phone }, new Date('2026-10-20T22:00:00Z'))).allowed).toBe(true);
  });

  it('counts the previous system’s calls toward the tenant’s 24-hour cap', async () => {
    const ref = `cap-${randomUUID()}`;
    const phone = '+13125550148';
    const policy = await app.request('PUT', '/v1/compliance-policy', { token: tenant.apiKey, body: { max_calls_per_day: 2 } });
    expect(policy.status).toBe(200);
    try {
      const [debtId] = await importDebts(tenant, [{ external_ref: ref, consumer_ref: `c-${ref}`, prior_attempts_7d: 2, contacts: [{ phone_e164: phone, is_primary: true }] }]);
      const d = await decideAt(tenant, { debtId: debtId!, phone }, new Date(Date.now() + 60_000));
      expect(d.checks.find((c) => c.gate === 'tenant_policy')!.outcome).toBe('block');
    } finally {
      expect((await app.request('PUT', '/v1/compliance-policy', { token: tenant.apiKey, body: { max_calls_per_day: null } })).status).toBe(200);
    }
  });

  it('refuses a text to a toll-free number with no timezone as quiet_hours, and a call to it', async () => {
    const ref = `tf-${randomUUID()}`;
    const phone = '+18885550149';
    const [debtId] = await importDebts(tenant, [{ external_ref: ref, consumer_ref: `c-${ref}`, contacts: [{ phone_e164: phone, is_primary: true }] }]);
    const sent = await app.request('POST', '/v1/sms/messages', { token: tenant.apiKey, body: { to: phone, body: 'Hello. Reply STOP to opt out.', debt_id: debtId } });
    expect(sent.status).toBe(422);
    expect(sent.body.error).toMatchObject({ code: 'compliance_blocked', gate: 'quiet_hours' });
    expect(sent.body.error.decision_id).toBeTruthy();
    const evidence = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findUniqueOrThrow({ where: { id: sent.body.error.decision_id } }));
    expect((evidence.payload as any).facts.number_non_geographic).toBe(true);
    const call = await decideAt(tenant, { debtId: debtId!, phone }, IN_FORCE_NOON_NY);
    expect(call.gate).toBe('quiet_hours');
    expect(call.reason).toContain('non-geographic');
  });

  it('an unhold on the seventh call judges that call, not an eighth', async () => {
    const [agentId] = await seatAgents(app, rig, tenant, 1);
    const created = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `unhold-${randomUUID()}`, campaign_type: 'manual' } });
    const campaignId: string = created.body.campaign.id;
    expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey })).status).toBe(200);
    const phone = numberEnding(daytimePrefix(), (serial += 1), 10);
    const ref = `seventh-${randomUUID()}`;
    const [debtId] = await importDebts(tenant, [
      { external_ref: ref, consumer_ref: `c-${ref}`, campaign_id: campaignId, prior_attempts_7d: 6, contacts: [{ phone_e164: phone, is_primary: true }] },
    ]);
    const dialed = await app.request('POST', `/v1/campaigns/${campaignId}/dial`, { token: tenant.apiKey, body: { debt_id: debtId, agent_id: agentId } });
    expect(dialed.body).toMatchObject({ status: 'dialing' });
    const callId: string = dialed.body.call_id;
    await waitFor(() => Promise.resolve(rig.sim.channel(callId)?.bridgedTo ?? undefined), 30_000, 'the agent bridge');
    // The conversation is recorded once the switch confirms the bridge, a moment after the simulator shows it.
    await waitFor(
      async () => (await app.request('GET', `/v1/debts/${debtId}`, { token: tenant.apiKey })).body.debt?.last_conversation_at ?? undefined,
      10_000,
      'the bridge conversation',
    );
    expect((await app.request('POST', `/v1/calls/${callId}/hold`, { token: tenant.apiKey })).status).toBe(200);
    const unheld = await app.request('POST', `/v1/calls/${callId}/unhold`, { token: tenant.apiKey });
    expect(unheld.status).toBe(200);
    // A new attempt on the debt is still refused: the live call and its conversation count for the next one.
    const next = await decideAt(tenant, { debtId: debtId!, phone, campaignId }, new Date());
    expect(next.gate).toBe('regf_7in7');
    expect(next.checks.find((c) => c.gate === 'regf_post_contact')!.outcome).toBe('block');
    await app.request('POST', `/v1/calls/${callId}/hangup`, { token: tenant.apiKey });
  });
});
