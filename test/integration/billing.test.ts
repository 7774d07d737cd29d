import { randomUUID } from 'node:crypto';
import { withTenant, withTenantSql } from '../../src/lib/tenancy';
import { billingRoutes } from '../../src/modules/billing/billing.routes';
import { billingRefusal, evaluateBilling } from '../../src/modules/billing/billing.service';
import { campaignRunWorkflowId } from '../../workflows/ids';
import { waitFor } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueName, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken, widgetRouter } from '../helpers/widget';

jest.setTimeout(120_000);

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

// No worker polls this queue: campaign runs exist in Temporal and take signals but never execute.
const idleQueue = `billing-idle-${randomUUID()}`;
let app: TestApp;
const opened = new Set<string>();

beforeAll(async () => {
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: idleQueue });
});
afterAll(async () => {
  for (const id of opened) {
    await app.deps.temporal!.workflow
      .getHandle(id)
      .terminate('test cleanup')
      .catch(() => undefined);
  }
  await app?.close();
});

const admin = (method: string, tenantId: string, suffix: string, body?: unknown, token: string | null = ADMIN_TOKEN, localAddress?: string) =>
  app.request(method, `/v1/admin/tenants/${tenantId}/plan${suffix}`, { token, body, localAddress });
/**
 * Failed operator authentication is rate limited per client address across the whole test database:
 * this file's failures come from an address of their own, so they never spend another file's budget.
 */
const FAILING_OPERATOR_ADDRESS = '127.0.99.1';
const account = (t: ProvisionedTenant) => app.request('GET', '/v1/billing/account', { token: t.apiKey });

/** Metered voice-AI spend of `costUsd`, answered now (this month). */
async function spendAi(t: ProvisionedTenant, costUsd: string) {
  await withTenantSql(app.deps.db, t.tenantId, (sql) =>
    sql.query(
      `INSERT INTO ai_usage (tenant_id, call_uuid, answered_at, ended_at, billable_seconds, minute_rate_usd, cost_usd)
       VALUES (app_tenant_id(), $1, now(), now(), 60, 0.12, $2::numeric)`,
      [randomUUID(), costUsd],
    ),
  );
}

async function runningCampaign(t: ProvisionedTenant): Promise<string> {
  const created = await app.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name: uniqueName('billing') } });
  expect(created.status).toBe(201);
  const id = created.body.campaign.id as string;
  opened.add(campaignRunWorkflowId(t.tenantId, id));
  expect((await app.request('POST', `/v1/campaigns/${id}/start`, { token: t.apiKey })).status).toBe(200);
  return id;
}

const stateOf = async (t: ProvisionedTenant, id: string) =>
  (await withTenant(app.deps.db, t.tenantId, (tx) => tx.campaign.findUniqueOrThrow({ where: { id }, select: { state: true } }))).state;
const planStatusOf = async (t: ProvisionedTenant) => (await app.request('GET', `/v1/admin/tenants/${t.tenantId}`, { token: ADMIN_TOKEN })).body.tenant.plan_status;

describe('GET /v1/billing/account', () => {
  it('billing off: 200 with billing_enabled false, never 404', async () => {
    const t = await provisionTenant(app);
    const res = await account(t);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      tenant_id: t.tenantId,
      currency: 'USD',
      billing_enabled: false,
      scheme: null,
      plan_status: 'active',
      enforcement_mode: null,
      alert_thresholds: [],
      balance: null,
      cap: null,
    });
  });

  it('billing on: balances and the period cap as decimal strings', async () => {
    const t = await provisionTenant(app);
    expect((await admin('PUT', t.tenantId, '', { scheme: 'postpaid', cap_usd: '10', credit_limit_usd: 50 })).status).toBe(200);
    expect((await admin('POST', t.tenantId, '/credits', { kind: 'cash', amount_usd: '20.5', note: 'wire' })).status).toBe(201);
    expect((await admin('POST', t.tenantId, '/credits', { kind: 'grant', amount_usd: 5 })).status).toBe(201);
    expect((await admin('POST', t.tenantId, '/credits', { kind: 'deposit', amount_usd: '100' })).status).toBe(201);
    expect((await admin('POST', t.tenantId, '/credits', { kind: 'hold', amount_usd: '7.25' })).status).toBe(201);
    expect((await admin('POST', t.tenantId, '/credits', { kind: 'hold_release', amount_usd: '2' })).status).toBe(201);
    await spendAi(t, '3.3333');
    const res = await account(t);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      tenant_id: t.tenantId,
      currency: 'USD',
      billing_enabled: true,
      scheme: 'postpaid',
      plan_status: 'active',
      enforcement_mode: null,
      alert_thresholds: [50, 80, 100],
      // 20.5 + 5 + 50 − (7.25 − 2)
      balance: { cash_usd: '20.5000', grant_usd: '5.0000', deposit_usd: '100.0000', credit_limit_usd: '50.0000', available_usd: '70.2500' },
      cap: { scheme: 'postpaid', period_key: new Date().toISOString().slice(0, 7), limit_usd: '10.0000', spent_usd: '3.3333', used_pct: 33.3 },
    });
  });

  it('prepaid: usage draws the grant first, then cash; a zero cap has used_pct null', async () => {
    const t = await provisionTenant(app);
    await admin('PUT', t.tenantId, '', { scheme: 'prepaid', cap_usd: 0 });
    await admin('POST', t.tenantId, '/credits', { kind: 'cash', amount_usd: '10' });
    await admin('POST', t.tenantId, '/credits', { kind: 'grant', amount_usd: '2' });
    await spendAi(t, '3.5');
    const res = await account(t);
    expect(res.body.balance).toEqual({ cash_usd: '8.5000', grant_usd: '0.0000', deposit_usd: '0.0000', credit_limit_usd: '0.0000', available_usd: '8.5000' });
    expect(res.body.cap).toMatchObject({ limit_usd: '0.0000', spent_usd: '3.5000', used_pct: null });
  });
});

describe('tenant billing routes: scope', () => {
  const PATHS = ['/v1/billing/account', '/v1/billing/alerts', '/v1/billing/summary', '/v1/billing/invoice?month=2026-01'];

  it('a ddw_ widget token is 403 (management scope), through the app and on the routes themselves', async () => {
    const t = await provisionTenant(app);
    const { token } = await insertAgentWidgetToken(app, t.tenantId, t.adminAgentId);
    const router = widgetRouter(t, billingRoutes(app.deps));
    for (const path of PATHS) {
      expectError(await app.request('GET', path, { token }), 403, 'forbidden');
      const res = await router.request(path);
      expect({ path, status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code }).toEqual({ path, status: 403, code: 'forbidden' });
    }
  });

  it('no credential is 401', async () => {
    for (const path of PATHS) expectError(await app.request('GET', path), 401, 'unauthorized');
  });
});

describe('operator plan routes', () => {
  let t: ProvisionedTenant;
  beforeAll(async () => {
    t = await provisionTenant(app);
  });

  it('need the operator bearer: none or a tenant key is 401', async () => {
    for (const [method, suffix, body] of [
      ['PUT', '', { scheme: 'prepaid' }],
      ['POST', '/credits', { kind: 'cash', amount_usd: 1 }],
      ['PUT', '/enforcement-mode', { mode: 'graduated' }],
      ['PUT', '/alert-thresholds', { thresholds: [50] }],
    ] as const) {
      expectError(await admin(method, t.tenantId, suffix, body, null, FAILING_OPERATOR_ADDRESS), 401, 'unauthorized');
      expectError(await admin(method, t.tenantId, suffix, body, t.apiKey, FAILING_OPERATOR_ADDRESS), 401, 'unauthorized');
    }
  });

  it('an unknown or malformed tenant id is 404', async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      expectError(await admin('PUT', id, '', { scheme: 'prepaid' }), 404, 'not_found');
      expectError(await admin('POST', id, '/credits', { kind: 'cash', amount_usd: 1 }), 404, 'not_found');
      expectError(await admin('PUT', id, '/enforcement-mode', { mode: 'graduated' }), 404, 'not_found');
      expectError(await admin('PUT', id, '/alert-thresholds', { thresholds: [50] }), 404, 'not_found');
    }
  });

  it.each([
    ['unknown key on plan', 'PUT', '', { scheme: 'prepaid', extra: 1 }, /extra/],
    ['unknown scheme', 'PUT', '', { scheme: 'freemium' }, undefined],
    ['scheme missing', 'PUT', '', { cap_usd: 5 }, undefined],
    ['amount of a wrong type', 'POST', '/credits', { kind: 'cash', amount_usd: true }, undefined],
    ['thresholds not integers', 'PUT', '/alert-thresholds', { thresholds: [50.5] }, undefined],
    ['unknown key on mode', 'PUT', '/enforcement-mode', { mode: 'graduated', x: 1 }, /x/],
  ])('400 bad_request: %s', async (_name, method, suffix, body, message) => {
    expectError(await admin(method, t.tenantId, suffix, body), 400, 'bad_request', message);
  });

  it.each([
    ['cap with 5 decimal places', 'PUT', '', { scheme: 'prepaid', cap_usd: '1.23456' }, /cap_usd/],
    ['negative credit limit', 'PUT', '', { scheme: 'prepaid', credit_limit_usd: -1 }, /credit_limit_usd/],
    ['unknown ledger kind', 'POST', '/credits', { kind: 'refund', amount_usd: 1 }, /kind/],
    ['zero credit', 'POST', '/credits', { kind: 'cash', amount_usd: '0' }, /above 0/],
    ['unknown mode', 'PUT', '/enforcement-mode', { mode: 'lenient' }, /mode/],
    ['threshold 0', 'PUT', '/alert-thresholds', { thresholds: [0, 50] }, /1 to 100/],
    ['threshold 101', 'PUT', '/alert-thresholds', { thresholds: [101] }, /1 to 100/],
    ['duplicate thresholds', 'PUT', '/alert-thresholds', { thresholds: [50, 50] }, /distinct/],
    ['too many thresholds', 'PUT', '/alert-thresholds', { thresholds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }, /at most 10/],
  ])('422 unprocessable: %s', async (_name, method, suffix, body, message) => {
    expectError(await admin(method, t.tenantId, suffix, body), 422, 'unprocessable', message);
  });

  it('set mode and thresholds, audited as operator; the credit answers its ledger entry', async () => {
    const mode = await admin('PUT', t.tenantId, '/enforcement-mode', { mode: 'graduated' });
    expect(mode.status).toBe(200);
    const thresholds = await admin('PUT', t.tenantId, '/alert-thresholds', { thresholds: [90, 25] });
    expect(thresholds.body.account).toMatchObject({ billing_enabled: false });
    await admin('PUT', t.tenantId, '', { scheme: 'subscription' });
    const credit = await admin('POST', t.tenantId, '/credits', { kind: 'grant', amount_usd: 12.34, note: 'promo' });
    expect(credit.status).toBe(201);
    expect(credit.body.entry).toMatchObject({ kind: 'grant', amount_usd: '12.3400', note: 'promo' });
    expect(credit.body.account).toMatchObject({ scheme: 'subscription', enforcement_mode: 'graduated', alert_thresholds: [25, 90] });
    const audits = await withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findMany({ where: { action: { startsWith: 'billing.' } }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }));
    expect(audits.map((a) => [a.action, a.actorType])).toEqual([
      ['billing.enforcement_mode_set', 'operator'],
      ['billing.alert_thresholds_set', 'operator'],
      ['billing.plan_set', 'operator'],
      ['billing.credit_added', 'operator'],
    ]);
  });
});

describe('alerts', () => {
  it('each threshold is recorded once per period under concurrent evaluations', async () => {
    const t = await provisionTenant(app);
    await admin('PUT', t.tenantId, '', { scheme: 'postpaid', cap_usd: '10' });
    await admin('PUT', t.tenantId, '/enforcement-mode', { mode: 'graduated' });
    const empty = await app.request('GET', '/v1/billing/alerts', { token: t.apiKey });
    expect(empty.body).toEqual({ tenant_id: t.tenantId, period_key: new Date().toISOString().slice(0, 7), alerts: [] });

    // The 9.00 lands at once: a pass between two partial spends would record the 50 % alert at a lower figure.
    await spendAi(t, '9');
    // Workers of other test files run the periodic billing pass across tenants, so this tenant may have
    // been evaluated by it already: assert what is recorded, not which evaluation recorded it.
    const results = await Promise.all(Array.from({ length: 8 }, () => evaluateBilling(app.deps, t.tenantId)));
    const crossed = results.flatMap((r) => r.crossed);
    expect(new Set(crossed).size).toBe(crossed.length);
    expect(crossed.every((pct) => pct === 50 || pct === 80)).toBe(true);

    const res = await app.request('GET', '/v1/billing/alerts', { token: t.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.alerts.map((a: { threshold_pct: number }) => a.threshold_pct).sort()).toEqual([50, 80]);
    for (const alert of res.body.alerts) {
      expect(alert).toEqual({ threshold_pct: alert.threshold_pct, scheme: 'postpaid', enforcement_mode: 'graduated', spent_usd: '9.0000', limit_usd: '10.0000', crossed_at: expect.any(String) });
    }

    await spendAi(t, '1');
    await Promise.all(Array.from({ length: 4 }, () => evaluateBilling(app.deps, t.tenantId)));
    const after = await app.request('GET', '/v1/billing/alerts', { token: t.apiKey });
    expect(after.body.alerts[0]).toMatchObject({ threshold_pct: 100, spent_usd: '10.0000' });
    expect(after.body.alerts).toHaveLength(3);
  });

  it('an inert lane (billing off or no cap) gives period_key null and no alerts', async () => {
    const off = await provisionTenant(app);
    expect((await app.request('GET', '/v1/billing/alerts', { token: off.apiKey })).body).toEqual({ tenant_id: off.tenantId, period_key: null, alerts: [] });
    const noCap = await provisionTenant(app);
    await admin('PUT', noCap.tenantId, '', { scheme: 'postpaid' });
    expect((await app.request('GET', '/v1/billing/alerts', { token: noCap.apiKey })).body).toEqual({ tenant_id: noCap.tenantId, period_key: null, alerts: [] });
  });
});

describe('enforcement', () => {
  it('the cap suspends running campaigns (paused ones stay), a raise restores them to running', async () => {
    const t = await provisionTenant(app);
    const running = await runningCampaign(t);
    const paused = await runningCampaign(t);
    expect((await app.request('POST', `/v1/campaigns/${paused}/pause`, { token: t.apiKey })).status).toBe(200);
    await admin('PUT', t.tenantId, '', { scheme: 'postpaid', cap_usd: '5' });
    await admin('PUT', t.tenantId, '/enforcement-mode', { mode: 'hard_block' });

    await spendAi(t, '5');
    // Workers of other test files run the periodic billing pass across tenants, so this tenant may have
    // been evaluated by it already: assert what is recorded, not which evaluation recorded it.
    await evaluateBilling(app.deps, t.tenantId);
    expect(await stateOf(t, running)).toBe('suspended_balance');
    expect(await stateOf(t, paused)).toBe('paused');
    expect(await planStatusOf(t)).toBe('past_due');
    const refusal = await withTenantSql(app.deps.db, t.tenantId, (sql) => billingRefusal(sql));
    expect(refusal?.message).toMatch(/cap is reached/);
    const audit = await withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findFirst({ where: { subjectId: running, action: 'campaign.suspend_balance' } }));
    expect(audit).toMatchObject({ actorType: 'system', payload: { from: 'running', to: 'suspended_balance' } });
    // A lifecycle call cannot start a suspended campaign; stop still ends it.
    expect((await app.request('POST', `/v1/campaigns/${running}/start`, { token: t.apiKey })).status).toBe(409);

    const raised = await admin('PUT', t.tenantId, '', { scheme: 'postpaid', cap_usd: '50' });
    expect(raised.body.account.cap).toMatchObject({ limit_usd: '50.0000', spent_usd: '5.0000', used_pct: 10 });
    expect(await stateOf(t, running)).toBe('running');
    expect(await stateOf(t, paused)).toBe('paused');
    expect(await planStatusOf(t)).toBe('active');
    expect(await withTenantSql(app.deps.db, t.tenantId, (sql) => billingRefusal(sql))).toBeNull();
    const run = app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(t.tenantId, running));
    await waitFor(async () => ((await run.describe()).status.name === 'RUNNING' ? true : undefined), 10_000, 'run open');
  });

  it('judges spend committed while it waited on the account lock (a stale evaluation never clears a due block)', async () => {
    const t = await provisionTenant(app);
    // Prepaid: its balance is drawn down by spend up to the evaluation's clock.
    await admin('PUT', t.tenantId, '', { scheme: 'prepaid' });
    await admin('POST', t.tenantId, '/credits', { kind: 'cash', amount_usd: '5' });
    const holder = await app.deps.db.pool.connect();
    let evaluation: ReturnType<typeof evaluateBilling> | undefined;
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT set_config('app.tenant_id', $1, true)`, [t.tenantId]);
      await holder.query('SELECT 1 FROM billing_accounts WHERE tenant_id = $1 FOR UPDATE', [t.tenantId]);
      evaluation = evaluateBilling(app.deps, t.tenantId);
      await waitFor(
        async () => {
          const { rows } = await app.deps.db.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM billing_accounts%FOR UPDATE%'`,
          );
          return rows[0]!.n > 0 ? true : undefined;
        },
        10_000,
        'the evaluation waiting on the account lock',
      );
      await spendAi(t, '5');
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    expect((await evaluation).blocked).toBe('funds_exhausted');
    expect((await withTenantSql(app.deps.db, t.tenantId, (sql) => billingRefusal(sql)))?.message).toMatch(/funds are exhausted/);
  });

  it('prepaid: exhausted funds suspend; a cash credit restores', async () => {
    const t = await provisionTenant(app);
    const id = await runningCampaign(t);
    await admin('PUT', t.tenantId, '', { scheme: 'prepaid' });
    await admin('POST', t.tenantId, '/credits', { kind: 'cash', amount_usd: '2' });
    expect(await stateOf(t, id)).toBe('running');
    await spendAi(t, '2');
    // Workers of other test files run the periodic billing pass across tenants, so this tenant may have
    // been evaluated by it already: assert what is recorded, not which evaluation recorded it.
    await evaluateBilling(app.deps, t.tenantId);
    expect((await withTenantSql(app.deps.db, t.tenantId, (sql) => billingRefusal(sql)))?.message).toMatch(/funds are exhausted/);
    expect(await stateOf(t, id)).toBe('suspended_balance');
    expect((await account(t)).body.balance).toMatchObject({ cash_usd: '0.0000', available_usd: '0.0000' });

    const credited = await admin('POST', t.tenantId, '/credits', { kind: 'cash', amount_usd: '10' });
    expect(credited.body.account.balance).toMatchObject({ available_usd: '10.0000' });
    expect(await stateOf(t, id)).toBe('running');
  });

  it('graduated refuses no one-off sends while blocked (its campaigns are suspended); turning billing off restores', async () => {
    const t = await provisionTenant(app);
    const id = await runningCampaign(t);
    await admin('PUT', t.tenantId, '/enforcement-mode', { mode: 'graduated' });
    await admin('PUT', t.tenantId, '', { scheme: 'subscription', cap_usd: '1' });
    await spendAi(t, '1');
    await evaluateBilling(app.deps, t.tenantId);
    expect(await stateOf(t, id)).toBe('suspended_balance');
    expect(await withTenantSql(app.deps.db, t.tenantId, (sql) => billingRefusal(sql))).toBeNull();
    await admin('PUT', t.tenantId, '', { scheme: null });
    expect(await stateOf(t, id)).toBe('running');
    expect((await account(t)).body.billing_enabled).toBe(false);
  });
});
