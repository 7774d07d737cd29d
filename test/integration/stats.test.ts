import { randomUUID } from 'node:crypto';
import { withTenant, type Tx } from '../../src/lib/tenancy';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

const HOUR = 3600_000;
const DAY = 24 * HOUR;

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

async function seed<T>(tenant: ProvisionedTenant, work: (tx: Tx) => Promise<T>): Promise<T> {
  return withTenant(app.deps.db, tenant.tenantId, work);
}

async function debt(tx: Tx, tenant: ProvisionedTenant, over: { campaignId?: string; consumerRef?: string } = {}) {
  return tx.debt.create({
    data: {
      tenantId: tenant.tenantId,
      externalRef: `x-${randomUUID()}`,
      consumerRef: over.consumerRef ?? `c-${randomUUID()}`,
      campaignId: over.campaignId ?? null,
    },
  });
}

async function attempt(tx: Tx, tenant: ProvisionedTenant, debtId: string, over: { startedAt?: Date; disposition?: string | null; answeredAt?: Date | null; amdVerdict?: string | null } = {}) {
  return tx.callAttempt.create({
    data: {
      tenantId: tenant.tenantId,
      debtId,
      consumerRef: 'c',
      debtKey: 'k',
      toNumber: '+13035550100',
      startedAt: over.startedAt ?? new Date(),
      disposition: over.disposition ?? null,
      answeredAt: over.answeredAt ?? null,
      amdVerdict: over.amdVerdict ?? null,
    },
  });
}

describe('GET /v1/stats/summary', () => {
  it('counts today’s placed calls and connects, seats and running campaigns', async () => {
    const tenant = await provisionTenant(app);
    await seed(tenant, async (tx) => {
      const d = await debt(tx, tenant);
      const now = new Date();
      await attempt(tx, tenant, d.id, { answeredAt: now, amdVerdict: 'human', disposition: 'answered_human' });
      await attempt(tx, tenant, d.id, { answeredAt: now, amdVerdict: 'machine' });
      await attempt(tx, tenant, d.id, { disposition: 'busy' });
      await attempt(tx, tenant, d.id, { disposition: 'not_placed' });
      await attempt(tx, tenant, d.id, { startedAt: new Date(Date.UTC(2020, 0, 1)), answeredAt: new Date(Date.UTC(2020, 0, 1)) });
      await tx.agent.create({ data: { tenantId: tenant.tenantId, name: 'A', email: `a-${randomUUID()}@x.io`, presence: 'available' } });
      await tx.agent.create({ data: { tenantId: tenant.tenantId, name: 'B', email: `b-${randomUUID()}@x.io`, presence: 'on_call' } });
      await tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `run-${randomUUID()}`, state: 'running' } });
      await tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `draft-${randomUUID()}` } });
    });
    const res = await app.request('GET', '/v1/stats/summary', { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      date: new Date().toISOString().slice(0, 10),
      window: 'utc_day',
      calls_today: 3,
      connected_today: 1,
      connect_rate: 1 / 3,
      agents_online: 2, // the provisioning admin seat is offline
      agents_available: 1,
      campaigns_running: 1,
    });
  });

  it('answers a null connect rate for a quiet tenant, and 401 without a credential', async () => {
    const tenant = await provisionTenant(app);
    const res = await app.request('GET', '/v1/stats/summary', { token: tenant.apiKey });
    expect(res.body).toMatchObject({ calls_today: 0, connect_rate: null, campaigns_running: 0 });
    expectError(await app.request('GET', '/v1/stats/summary'), 401, 'unauthorized');
  });
});

describe('GET /v1/stats/promises', () => {
  it('sums open promises per currency and computes the 30-day kept rate', async () => {
    const tenant = await provisionTenant(app);
    await seed(tenant, async (tx) => {
      const d = await debt(tx, tenant);
      const a = await attempt(tx, tenant, d.id, { disposition: 'promise_to_pay' });
      const promise = (amountCents: number, currency: string, status: string, dueInDays: number) =>
        tx.paymentPromise.create({
          data: { tenantId: tenant.tenantId, debtId: d.id, callAttemptId: a.id, amountCents, currency, status, promisedDate: new Date(Date.now() + dueInDays * DAY) },
        });
      await promise(1000, 'USD', 'pending', 10);
      await promise(2500, 'USD', 'pending', 20);
      await promise(70000, 'MXN', 'pending', 5);
      await promise(500, 'USD', 'kept', -3);
      await promise(500, 'USD', 'kept', -10);
      await promise(500, 'USD', 'broken', -20);
      await promise(500, 'USD', 'broken', -45); // outside the window
      await promise(500, 'USD', 'cancelled', -2); // neither kept nor broken
    });
    const res = await app.request('GET', '/v1/stats/promises', { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ open: { count: 3, amount_cents: { MXN: 70000, USD: 3500 } }, kept_rate_30d: 2 / 3, window_days: 30 });
  });

  it('answers a null kept rate when nothing resolved', async () => {
    const tenant = await provisionTenant(app);
    expect((await app.request('GET', '/v1/stats/promises', { token: tenant.apiKey })).body).toEqual({
      open: { count: 0, amount_cents: {} },
      kept_rate_30d: null,
      window_days: 30,
    });
  });
});

describe('GET /v1/stats/penetration', () => {
  let tenant: ProvisionedTenant;
  let c1: string;
  let c2: string;

  beforeAll(async () => {
    tenant = await provisionTenant(app);
    let talkedCall = '';
    ({ c1, c2 } = await seed(tenant, async (tx) => {
      const one = await tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `p1-${randomUUID()}` } });
      const two = await tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `p2-${randomUUID()}` } });
      // Campaign one: 4 debts, 3 consumers.
      const untouched = await debt(tx, tenant, { campaignId: one.id, consumerRef: 'shared' });
      const busyOnly = await debt(tx, tenant, { campaignId: one.id, consumerRef: 'shared' });
      const corrected = await debt(tx, tenant, { campaignId: one.id, consumerRef: 'c-3' });
      const talked = await debt(tx, tenant, { campaignId: one.id, consumerRef: 'c-4' });
      expect(untouched.id).toBeTruthy();
      await attempt(tx, tenant, busyOnly.id, { disposition: 'busy' });
      await attempt(tx, tenant, busyOnly.id, { disposition: 'busy' });
      // An attempt first marked no_answer, then corrected to wrong_number: the latest correction counts.
      const original = await attempt(tx, tenant, corrected.id, { disposition: 'no_answer' });
      await tx.callAttempt.create({
        data: { tenantId: tenant.tenantId, debtId: corrected.id, consumerRef: 'c', debtKey: 'k', toNumber: '+13035550100', disposition: 'wrong_number', correctsId: original.id },
      });
      talkedCall = (await attempt(tx, tenant, talked.id, { disposition: 'answered_human', answeredAt: new Date(), amdVerdict: 'human' })).id;
      await attempt(tx, tenant, talked.id, { disposition: 'not_placed' });
      // Campaign two: one debt of the shared consumer, attempted long ago only.
      const old = await debt(tx, tenant, { campaignId: two.id, consumerRef: 'shared' });
      await attempt(tx, tenant, old.id, { disposition: 'answered_human', startedAt: new Date(Date.now() - 40 * DAY), answeredAt: new Date(Date.now() - 40 * DAY), amdVerdict: 'human' });
      return { c1: one.id, c2: two.id };
    }));
    // The talked-to debt's conversation: the agent's right-party disposition of its answered call.
    const disposed = await app.request('POST', `/v1/call_attempts/${talkedCall}/disposition`, { token: tenant.apiKey, body: { disposition: 'conversation' } });
    expect(disposed.status).toBe(201);
  });

  it('counts each debt once: attempted, reached by final disposition or conversation, effective contact', async () => {
    const res = await app.request('GET', `/v1/stats/penetration?campaign_ids=${c1},${c2}`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.by_campaign).toEqual([
      { campaign_id: c1, unique_accounts: 4, unique_consumers: 3, attempted: 3, reached: 2, effective_contact: 1, attempted_pct: 75, reached_pct: 50, effective_contact_pct: 25 },
      { campaign_id: c2, unique_accounts: 1, unique_consumers: 1, attempted: 1, reached: 1, effective_contact: 1, attempted_pct: 100, reached_pct: 100, effective_contact_pct: 100 },
    ]);
    expect(res.body.totals).toEqual({
      campaign_id: null,
      unique_accounts: 5,
      unique_consumers: 3,
      attempted: 4,
      reached: 3,
      effective_contact: 2,
      attempted_pct: 80,
      reached_pct: 60,
      effective_contact_pct: 40,
    });
  });

  it('limits attempts and conversations to [from, to)', async () => {
    const from = encodeURIComponent(new Date(Date.now() - 7 * DAY).toISOString());
    const res = await app.request('GET', `/v1/stats/penetration?campaign_id=${c2}&from=${from}`, { token: tenant.apiKey });
    expect(res.body.by_campaign[0]).toMatchObject({ unique_accounts: 1, attempted: 0, reached: 0, effective_contact: 0 });
  });

  it('gives rows of zeros for unknown or foreign campaigns', async () => {
    const other = await provisionTenant(app);
    const res = await app.request('GET', `/v1/stats/penetration?campaign_ids=${c1}`, { token: other.apiKey });
    expect(res.body.by_campaign).toEqual([expect.objectContaining({ campaign_id: c1, unique_accounts: 0, attempted_pct: 0 })]);
  });

  it.each([
    ['no campaign_ids', '', 'campaign_ids is required'],
    ['from after to', `campaign_ids=${randomUUID()}&from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z`, "'from' is after 'to'"],
  ])('answers 422 for %s (a rule across parameters)', async (_label, query, message) => {
    const res = await app.request('GET', `/v1/stats/penetration?${query}`, { token: tenant.apiKey });
    expectError(res, 422, 'unprocessable');
    expect(res.body.error.message).toContain(message);
  });

  it.each([
    ['an empty campaign_ids', 'campaign_ids=', 'campaign_ids'],
    ['a non-uuid', 'campaign_ids=nope', 'uuids'],
    ['101 ids', `campaign_ids=${Array.from({ length: 101 }, () => randomUUID()).join(',')}`, '1 to 100'],
    ['a non-uuid campaign_id beside campaign_ids', `campaign_ids=${randomUUID()}&campaign_id=nope`, 'campaign_id'],
    ['a bad timestamp', `campaign_ids=${randomUUID()}&from=yesterday`, 'from'],
  ])('answers 400 for %s', async (_label, query, message) => {
    const res = await app.request('GET', `/v1/stats/penetration?${query}`, { token: tenant.apiKey });
    expectError(res, 400, 'bad_request');
    expect(res.body.error.message).toContain(message);
  });
});
