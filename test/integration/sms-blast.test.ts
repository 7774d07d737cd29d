import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { dialTick, type TickInput } from '../../src/modules/dialer/dial-tick.service';
import { DEFAULT_RUNNER_OPTIONS } from '../../src/modules/dialer/runner-options';
import { blastClientRef } from '../../src/modules/dialer/sms-blast.service';
import { runStateQuery, wakeSignal } from '../../workflows/campaign-run.workflow';
import { campaignRunWorkflowId } from '../../workflows/ids';
import { daytimePrefix, numberEnding, runWorker, waitFor, type RunningWorker } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

let app: TestApp;
let worker: RunningWorker;
const taskQueue = `sms-blast-${randomUUID()}`;
const BODY = 'Ref {{debt_ref}} ({{consumer_ref}}) acct {{account_number}}: ${{amount}} [{{state}}]. Reply STOP to opt out';

beforeAll(async () => {
  app = await startTestApp({ SMS_PROVIDER_ADAPTER: 'mock', TEMPORAL_TASK_QUEUE: taskQueue });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await worker?.stop();
  await app?.close();
});

interface SeededLead {
  debtId: string;
  phone: string;
  externalRef: string;
  consumerRef: string;
  accountNumber: string;
}

/** Debts of a campaign with a primary contact each and (unless `consent: false`) an SMS consent. */
async function seedSmsLeads(tenant: ProvisionedTenant, campaignId: string, leads: Array<{ phone: string; consent?: boolean }>): Promise<SeededLead[]> {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const out: SeededLead[] = [];
    for (const [i, lead] of leads.entries()) {
      const externalRef = `blast-${i}-${randomUUID().slice(0, 8)}`;
      const consumerRef = `consumer-${i}`;
      const accountNumber = `00${i}42`;
      const debt = await tx.debt.create({
        data: {
          tenantId: tenant.tenantId,
          campaignId,
          externalRef,
          consumerRef,
          accountNumber,
          amountCents: 12_345n + BigInt(i),
          createdAt: new Date(Date.now() - (1000 - i) * 1000),
        },
      });
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: lead.phone, isPrimary: true } });
      if (lead.consent !== false) {
        await tx.consent.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: lead.phone, channel: 'sms', source: 'import' } });
      } else {
        // Voice consent does not cover texts.
        await tx.consent.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: lead.phone, channel: 'voice', source: 'import' } });
      }
      out.push({ debtId: debt.id, phone: lead.phone, externalRef, consumerRef, accountNumber });
    }
    return out;
  });
}

const merged = (l: SeededLead, i: number) =>
  `Ref ${l.externalRef} (${l.consumerRef}) acct ${l.accountNumber}: $${(123.45 + i / 100).toFixed(2)} [open]. Reply STOP to opt out`;

async function ledger(tenant: ProvisionedTenant, campaignId: string) {
  const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.smsMessage.findMany({ where: { campaignId }, orderBy: [{ recordedAt: 'asc' }, { id: 'asc' }] }),
  );
  const originals = rows.filter((r) => r.correctsId === null);
  const transitionsOf = (id: string) => rows.filter((r) => r.correctsId === id);
  return { rows, originals, transitionsOf };
}

/** A number of the platform's house pool no other test holds. */
const houseNumber = () => `+1646${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

/** A house DID the operator gives the tenant: active at once. */
async function houseDid(tenant: ProvisionedTenant): Promise<{ id: string; e164: string }> {
  const res = await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [houseNumber()] } });
  expect(res.status).toBe(201);
  return res.body.dids[0] as { id: string; e164: string };
}

/** The sms_blast campaign's sender of these tests: its pool holds one active house DID. */
const senders = new Map<string, string>();

async function createBlast(tenant: ProvisionedTenant): Promise<string> {
  const did = await houseDid(tenant);
  const created = await app.request('POST', '/v1/campaigns', {
    token: tenant.apiKey,
    body: { name: `blast-${randomUUID()}`, campaign_type: 'sms_blast', sms_body: BODY, caller_id_pool: [did.id] },
  });
  expect(created.status).toBe(201);
  senders.set(created.body.campaign.id as string, did.e164);
  return created.body.campaign.id as string;
}

describe('a running sms_blast campaign', () => {
  it('texts each consented lead once with the merged body, refuses the unconsented, records the provider refusal', async () => {
    const tenant = await provisionTenant(app);
    const campaignId = await createBlast(tenant);
    const prefix = daytimePrefix();
    const leads = await seedSmsLeads(tenant, campaignId, [
      { phone: numberEnding(prefix, 1, 10) },
      { phone: numberEnding(prefix, 2, 11) },
      { phone: numberEnding(prefix, 3, 12) },
      { phone: numberEnding(prefix, 4, 13), consent: false },
      { phone: numberEnding(prefix, 5, 99) },
    ]);
    const [a, b, c, unconsented, refused] = leads as [SeededLead, SeededLead, SeededLead, SeededLead, SeededLead];

    // batch_size 2: the blast spreads over several ticks.
    const started = await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: tenant.apiKey, body: { tick_ms: 200, batch_size: 2 } });
    expect(started.status).toBe(200);
    expect(started.body.campaign.state).toBe('running');

    await waitFor(
      async () => {
        const l = await ledger(tenant, campaignId);
        return l.originals.length === 4 && l.originals.every((o) => l.transitionsOf(o.id).length > 0) ? l : undefined;
      },
      30_000,
      'four messages answered by the provider',
    );
    // Let more ticks pass, each woken (an idle run sleeps until something can give it work): nothing is texted again.
    const handle = app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(tenant.tenantId, campaignId));
    for (let i = 0; i < 4; i += 1) {
      const at = (await handle.query(runStateQuery)).tick;
      await handle.signal(wakeSignal);
      await waitFor(async () => ((await handle.query(runStateQuery)).tick > at ? true : undefined), 20_000, `woken tick ${i + 1}`);
    }

    const l = await ledger(tenant, campaignId);
    expect(l.originals).toHaveLength(4);
    expect(new Set(l.originals.map((o) => o.debtId)).size).toBe(4);
    for (const [i, lead] of [a, b, c].entries()) {
      const original = l.originals.find((o) => o.debtId === lead.debtId)!;
      expect(original).toMatchObject({
        direction: 'outbound',
        status: 'queued',
        fromE164: senders.get(campaignId),
        toE164: lead.phone,
        body: merged(lead, i),
        consumerRef: lead.consumerRef,
      });
      expect(original.clientRef).toMatch(new RegExp(`^blast:${campaignId}:${lead.debtId}:`));
      const transitions = l.transitionsOf(original.id);
      expect(transitions).toHaveLength(1);
      expect(transitions[0]).toMatchObject({ status: 'sent' });
      expect(Number(transitions[0]!.costUsd)).toBeGreaterThan(0);
    }
    // No SMS consent: the engine refuses, no ledger row; the decision is kept as evidence.
    expect(l.originals.find((o) => o.debtId === unconsented.debtId)).toBeUndefined();
    const evidence = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM compliance_refusals WHERE debt_id = ${unconsented.debtId}::uuid AND gate = 'tcpa_no_consent'`);
    expect(evidence[0]!.n).toBeGreaterThan(0);
    // The mock provider refuses destinations ending 99: a failed transition, never charged.
    const refusedRow = l.originals.find((o) => o.debtId === refused.debtId)!;
    expect(refusedRow.body).toBe(merged(refused, 4));
    expect(l.transitionsOf(refusedRow.id)).toEqual([expect.objectContaining({ status: 'failed', errorCode: 'mock_rejected', costUsd: null })]);

    // Sent debts rest 4 hours; refused ones the blocked cooldown (15 min by default).
    const debts = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findMany({ where: { campaignId } }));
    const restOf = (id: string) => debts.find((d) => d.id === id)!.nextDialableAt!.getTime() - Date.now();
    expect(restOf(a.debtId)).toBeGreaterThan(3.5 * 3600_000);
    expect(restOf(unconsented.debtId)).toBeLessThan(16 * 60_000);
    expect(restOf(unconsented.debtId)).toBeGreaterThan(10 * 60_000);
    expect(restOf(refused.debtId)).toBeLessThan(16 * 60_000);

    // The run's counters come from the SMS ledger.
    const stats = await app.request('GET', `/v1/campaigns/${campaignId}/stats`, { token: tenant.apiKey });
    expect(stats.body.stats).toMatchObject({ dialed: 4, finished: 4, in_flight: 0 });

    const stopped = await app.request('POST', `/v1/campaigns/${campaignId}/stop`, { token: tenant.apiKey });
    expect(stopped.body.campaign.state).toBe('completed');
    await expect(handle.result()).resolves.toMatchObject({ ended: 'stopped' });
  });
});

describe('the sms_blast tick, called directly', () => {
  async function runningBlast(tenant: ProvisionedTenant) {
    const campaignId = await createBlast(tenant);
    // Running without a workflow: the test plays the run's ticks itself.
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.update({ where: { id: campaignId }, data: { state: 'running' } }));
    return campaignId;
  }
  const tickInput = (tenant: ProvisionedTenant, campaignId: string, tickKey: string): TickInput => ({
    tenantId: tenant.tenantId,
    campaignId,
    workflowId: `test-${campaignId}`,
    tickKey,
    options: { ...DEFAULT_RUNNER_OPTIONS, batch_size: 10 },
    pacing: { ratio: 1, recent: [], connected: 0, abandoned: 0 },
    lastCounters: null,
    runStartedAt: new Date(Date.now() - 60_000).toISOString(),
  });

  it('a retried tick never texts twice, even when the earlier try died before pushing the debts', async () => {
    const tenant = await provisionTenant(app);
    const campaignId = await runningBlast(tenant);
    const prefix = daytimePrefix();
    const leads = await seedSmsLeads(tenant, campaignId, [{ phone: numberEnding(prefix, 6, 20) }, { phone: numberEnding(prefix, 7, 21) }]);
    const tickKey = `run-${randomUUID()}:0`;

    const first = await dialTick(app.deps, tickInput(tenant, campaignId, tickKey));
    expect(first).toMatchObject({ state: 'running', placed: 2, blocked: 0, notPlaced: 0, idle: null });
    // The earlier try died after its sends and before the push: the debts are due again.
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.updateMany({ where: { campaignId }, data: { nextDialableAt: null } }));
    const retried = await dialTick(app.deps, tickInput(tenant, campaignId, tickKey));
    expect(retried).toMatchObject({ placed: 0, blocked: 0, notPlaced: 0 });
    const l = await ledger(tenant, campaignId);
    expect(l.originals.map((o) => o.clientRef).sort()).toEqual(leads.map((x) => blastClientRef(campaignId, x.debtId, tickKey)).sort());
    expect(l.rows).toHaveLength(4);
    // ... and the retry settled the debts, so the next tick has nothing to send.
    const next = await dialTick(app.deps, tickInput(tenant, campaignId, `run-x:1`));
    expect(next).toMatchObject({ placed: 0, idle: 'no_dialable_leads' });
    expect((await ledger(tenant, campaignId)).rows).toHaveLength(4);
  });

  it('a new run (another tick key) never texts a debt the campaign texted and did not push', async () => {
    const tenant = await provisionTenant(app);
    const campaignId = await runningBlast(tenant);
    await seedSmsLeads(tenant, campaignId, [{ phone: numberEnding(daytimePrefix(), 8, 22) }]);
    expect(await dialTick(app.deps, tickInput(tenant, campaignId, `run-${randomUUID()}:0`))).toMatchObject({ placed: 1 });
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.updateMany({ where: { campaignId }, data: { nextDialableAt: null } }));
    expect(await dialTick(app.deps, tickInput(tenant, campaignId, `run-${randomUUID()}:0`))).toMatchObject({ placed: 0 });
    expect((await ledger(tenant, campaignId)).originals).toHaveLength(1);
    const debt = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findFirstOrThrow({ where: { campaignId } }));
    expect(debt.nextDialableAt).not.toBeNull();
  });

  it('a spend cap ends the tick early without throwing and leaves the lead due', async () => {
    const tenant = await provisionTenant(app);
    const campaignId = await runningBlast(tenant);
    const patched = await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN, body: { sms_monthly_budget_usd: 0 } });
    expect(patched.status).toBe(200);
    const [lead] = await seedSmsLeads(tenant, campaignId, [{ phone: numberEnding(daytimePrefix(), 8, 30) }]);
    const result = await dialTick(app.deps, tickInput(tenant, campaignId, `run-${randomUUID()}:0`));
    expect(result).toMatchObject({ placed: 0, blocked: 0, idle: 'sms_spend_cap_reached' });
    expect((await ledger(tenant, campaignId)).rows).toHaveLength(0);
    const debt = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findUniqueOrThrow({ where: { id: lead!.debtId } }));
    expect(debt.nextDialableAt).toBeNull();
  });

  it('texts nothing while no DID of the campaign is active, and from the active one once there is', async () => {
    const tenant = await provisionTenant(app);
    const campaignId = await runningBlast(tenant);
    const campaign = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.findUniqueOrThrow({ where: { id: campaignId } }));
    const [poolDid] = campaign.callerIdPool;
    const parked = await app.request('PATCH', `/v1/dids/${poolDid}`, { token: tenant.apiKey, body: { status: 'quarantine' } });
    expect(parked.status).toBe(200);
    const [lead] = await seedSmsLeads(tenant, campaignId, [{ phone: numberEnding(daytimePrefix(), 9, 31) }]);

    expect(await dialTick(app.deps, tickInput(tenant, campaignId, `run-${randomUUID()}:0`))).toMatchObject({ placed: 0, idle: 'sms_sender_unavailable' });
    expect((await ledger(tenant, campaignId)).rows).toHaveLength(0);
    const debt = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.findUniqueOrThrow({ where: { id: lead!.debtId } }));
    expect(debt.nextDialableAt).toBeNull();

    expect((await app.request('PATCH', `/v1/dids/${poolDid}`, { token: tenant.apiKey, body: { status: 'active' } })).status).toBe(200);
    expect(await dialTick(app.deps, tickInput(tenant, campaignId, `run-${randomUUID()}:0`))).toMatchObject({ placed: 1, idle: null });
    expect((await ledger(tenant, campaignId)).originals).toEqual([expect.objectContaining({ fromE164: senders.get(campaignId), toE164: lead!.phone })]);
  });
});
