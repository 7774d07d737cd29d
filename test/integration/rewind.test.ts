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

const DAY = 24 * 3600_000;

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

interface Fixture {
  tenant: ProvisionedTenant;
  campaignId: string;
  ids: Record<string, string>;
}

/**
 * A campaign with debts in known situations:
 *  busy2   2 busy attempts (latest busy), open
 *  fixed   1 attempt no_answer corrected to wrong_number
 *  fresh   never attempted
 *  closed  closed, 1 old no_answer attempt (20 days ago)
 *  paid    paid, 1 busy attempt: never rewound
 *  noconsent  never attempted, no consent (the engine would refuse it)
 */
async function fixture(): Promise<Fixture> {
  const tenant = await provisionTenant(app);
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const campaign = await tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `rw-${randomUUID()}`, campaignType: 'progressive' } });
    const ids: Record<string, string> = {};
    let n = 0;
    const debt = async (key: string, state = 'open', consent = true) => {
      n += 1;
      const phone = `+1303555${String(3000 + n)}`;
      const d = await tx.debt.create({ data: { tenantId: tenant.tenantId, campaignId: campaign.id, externalRef: `${key}-${randomUUID()}`, consumerRef: `c-${n}`, state } });
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: d.id, phoneE164: phone, isPrimary: true } });
      if (consent) await tx.consent.create({ data: { tenantId: tenant.tenantId, debtId: d.id, phoneE164: phone, channel: 'voice', source: 'import' } });
      ids[key] = d.id;
      return d.id;
    };
    const call = (tx2: Tx, debtId: string, disposition: string, startedAt = new Date(Date.now() - DAY)) =>
      tx2.callAttempt.create({ data: { tenantId: tenant.tenantId, debtId, consumerRef: 'c', debtKey: 'k', toNumber: '+13035550000', startedAt, disposition } });
    const busy2 = await debt('busy2');
    await call(tx, busy2, 'busy', new Date(Date.now() - 2 * DAY));
    await call(tx, busy2, 'busy');
    const fixed = await debt('fixed');
    const original = await call(tx, fixed, 'no_answer');
    await tx.callAttempt.create({
      data: { tenantId: tenant.tenantId, debtId: fixed, consumerRef: 'c', debtKey: 'k', toNumber: '+13035550000', disposition: 'wrong_number', correctsId: original.id },
    });
    await debt('fresh');
    const closed = await debt('closed', 'closed');
    await call(tx, closed, 'no_answer', new Date(Date.now() - 20 * DAY));
    const paid = await debt('paid', 'paid');
    await call(tx, paid, 'busy');
    await debt('noconsent', 'open', false);
    return { tenant, campaignId: campaign.id, ids };
  });
}

describe('rewind preview', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });

  const preview = (query: string) => app.request('GET', `/v1/campaigns/${f.campaignId}/rewind/preview${query}`, { token: f.tenant.apiKey });
  const sorted = (...keys: string[]) => keys.map((k) => f.ids[k]).sort();

  it('without filters matches every debt except paid, settled and disputed, and counts compliance exclusions', async () => {
    const res = await preview('');
    expect(res.status).toBe(200);
    expect(res.body.matching).toBe(5);
    expect([...res.body.debt_ids].sort()).toEqual(sorted('busy2', 'fixed', 'fresh', 'closed', 'noconsent'));
    // The closed debt (not workable) and the one without consent would be refused now.
    expect(res.body.excluded_by_compliance).toBeGreaterThanOrEqual(1);
  });

  it('matches the latest disposition, correction included', async () => {
    expect((await preview('?dispositions=busy')).body.debt_ids).toEqual(sorted('busy2'));
    expect((await preview('?dispositions=wrong_number')).body.debt_ids).toEqual(sorted('fixed'));
    expect((await preview('?dispositions=no_answer')).body.debt_ids).toEqual(sorted('closed'));
  });

  it('counts original placed attempts for max_attempts and ages the latest attempt', async () => {
    expect([...(await preview('?max_attempts=0')).body.debt_ids].sort()).toEqual(sorted('fresh', 'noconsent'));
    expect([...(await preview('?max_attempts=1')).body.debt_ids].sort()).toEqual(sorted('fixed', 'fresh', 'closed', 'noconsent'));
    expect([...(await preview('?last_attempt_older_than_days=10')).body.debt_ids].sort()).toEqual(sorted('fresh', 'closed', 'noconsent'));
  });

  it('takes the same filters in a POST body', async () => {
    const res = await app.request('POST', `/v1/campaigns/${f.campaignId}/rewind/preview`, { token: f.tenant.apiKey, body: { dispositions: ['busy'], max_attempts: 5 } });
    expect(res.body).toMatchObject({ matching: 1, debt_ids: sorted('busy2') });
  });

  it('answers 422 for the reserved amd_verdicts and 400 for bad types or unknown keys', async () => {
    expectError(await preview('?amd_verdicts=machine'), 422, 'unprocessable');
    expectError(await app.request('POST', `/v1/campaigns/${f.campaignId}/rewind/preview`, { token: f.tenant.apiKey, body: { amd_verdicts: ['machine'] } }), 422, 'unprocessable');
    expectError(await preview('?max_attempts=lots'), 400, 'bad_request');
    expectError(await app.request('POST', `/v1/campaigns/${f.campaignId}/rewind/preview`, { token: f.tenant.apiKey, body: { dispositions: 'busy' } }), 400, 'bad_request');
    expectError(await app.request('POST', `/v1/campaigns/${f.campaignId}/rewind/preview`, { token: f.tenant.apiKey, body: { since: 3 } }), 400, 'bad_request');
  });

  it('answers one identical 404 for unknown, malformed and foreign campaigns, and 401 without a credential', async () => {
    const other = await provisionTenant(app);
    const unknown = await app.request('GET', `/v1/campaigns/${randomUUID()}/rewind/preview`, { token: f.tenant.apiKey });
    expectError(unknown, 404, 'not_found');
    expect((await app.request('GET', '/v1/campaigns/nope/rewind/preview', { token: f.tenant.apiKey })).text).toBe(unknown.text);
    expect((await app.request('POST', `/v1/campaigns/${f.campaignId}/rewind`, { token: other.apiKey, body: {} })).text).toBe(unknown.text);
    expectError(await app.request('GET', `/v1/campaigns/${f.campaignId}/rewind/preview`), 401, 'unauthorized');
  });
});

describe('rewind', () => {
  it('requeues the matching debts, brings closed ones back to open, leaves the CDR untouched and audits', async () => {
    const f = await fixture();
    const cdrBefore = await withTenant(app.deps.db, f.tenant.tenantId, (tx) => tx.callAttempt.count());
    await withTenant(app.deps.db, f.tenant.tenantId, (tx) =>
      tx.debt.updateMany({ where: { campaignId: f.campaignId }, data: { nextDialableAt: new Date(Date.now() + 5 * DAY) } }),
    );
    const res = await app.request('POST', `/v1/campaigns/${f.campaignId}/rewind`, { token: f.tenant.apiKey, body: { last_attempt_older_than_days: 10 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ requeued: 3, callbacks_cancelled: 0 });
    const debts = await withTenant(app.deps.db, f.tenant.tenantId, (tx) => tx.debt.findMany({ where: { campaignId: f.campaignId } }));
    const byId = new Map(debts.map((d) => [d.id, d]));
    for (const key of ['fresh', 'closed', 'noconsent']) {
      expect(byId.get(f.ids[key]!)!.requeuedAt).not.toBeNull();
      expect(byId.get(f.ids[key]!)!.nextDialableAt).toBeNull();
    }
    expect(byId.get(f.ids.closed!)!.state).toBe('open');
    expect(byId.get(f.ids.busy2!)!.requeuedAt).toBeNull();
    expect(byId.get(f.ids.paid!)!.state).toBe('paid');
    expect(await withTenant(app.deps.db, f.tenant.tenantId, (tx) => tx.callAttempt.count())).toBe(cdrBefore);
    const audit = await withTenant(app.deps.db, f.tenant.tenantId, (tx) => tx.auditLog.findFirstOrThrow({ where: { action: 'campaign.rewound' } }));
    expect(audit.payload).toMatchObject({ requeued: 3, keep_scheduled_callbacks: true });
  });

  it('cancels the campaign’s pending callbacks of rewound debts only when asked', async () => {
    const f = await fixture();
    const callback = (debtId: string) =>
      withTenant(app.deps.db, f.tenant.tenantId, (tx) =>
        tx.callback.create({ data: { tenantId: f.tenant.tenantId, debtId, campaignId: f.campaignId, contactPhone: '+13035550000', scheduledAt: new Date(Date.now() + DAY) } }),
      );
    const onBusy = await callback(f.ids.busy2!);
    const onFresh = await callback(f.ids.fresh!);
    const kept = await app.request('POST', `/v1/campaigns/${f.campaignId}/rewind`, { token: f.tenant.apiKey, body: { dispositions: ['busy'] } });
    expect(kept.body).toEqual({ requeued: 1, callbacks_cancelled: 0 });
    const cancelled = await app.request('POST', `/v1/campaigns/${f.campaignId}/rewind`, {
      token: f.tenant.apiKey,
      body: { dispositions: ['busy'], keep_scheduled_callbacks: false },
    });
    expect(cancelled.body).toEqual({ requeued: 1, callbacks_cancelled: 1 });
    const statuses = await withTenant(app.deps.db, f.tenant.tenantId, (tx) => tx.callback.findMany({ where: { id: { in: [onBusy.id, onFresh.id] } } }));
    expect(Object.fromEntries(statuses.map((c) => [c.id, c.status]))).toEqual({ [onBusy.id]: 'cancelled', [onFresh.id]: 'pending' });
  });

  it('answers 422 for amd_verdicts, 400 for bad types and unknown keys, and changes nothing then', async () => {
    const f = await fixture();
    expectError(await app.request('POST', `/v1/campaigns/${f.campaignId}/rewind`, { token: f.tenant.apiKey, body: { amd_verdicts: [] } }), 422, 'unprocessable');
    expectError(await app.request('POST', `/v1/campaigns/${f.campaignId}/rewind`, { token: f.tenant.apiKey, body: { keep_scheduled_callbacks: 'no' } }), 400, 'bad_request');
    expectError(await app.request('POST', `/v1/campaigns/${f.campaignId}/rewind`, { token: f.tenant.apiKey, body: { max_attempts: -1 } }), 400, 'bad_request');
    const touched = await withTenant(app.deps.db, f.tenant.tenantId, (tx) => tx.debt.count({ where: { campaignId: f.campaignId, requeuedAt: { not: null } } }));
    expect(touched).toBe(0);
  });
});
