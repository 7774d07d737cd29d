import { randomUUID } from 'node:crypto';
import { withTenant, withTenantSql } from '../../src/lib/tenancy';
import { billingEnforcementWorkflowId } from '../../workflows/billing-enforcement.workflow';
import { campaignRunWorkflowId } from '../../workflows/ids';
import { runWorker, waitFor, type RunningWorker } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueName, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

const taskQueue = `billing-pass-${randomUUID()}`;
let app: TestApp;
let worker: RunningWorker;

beforeAll(async () => {
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue, BILLING_ENFORCEMENT_INTERVAL_MS: '300' });
  worker = await runWorker(app, taskQueue);
});
afterAll(async () => {
  await app?.deps.temporal?.workflow
    .getHandle(billingEnforcementWorkflowId(taskQueue))
    .terminate('test cleanup')
    .catch(() => undefined);
  await worker?.stop();
  await app?.close();
});

const admin = (tenantId: string, suffix: string, body: unknown) =>
  app.request('PUT', `/v1/admin/tenants/${tenantId}/plan${suffix}`, { token: ADMIN_TOKEN, body });

async function spendAi(t: ProvisionedTenant, costUsd: string) {
  await withTenantSql(app.deps.db, t.tenantId, (sql) =>
    sql.query(
      `INSERT INTO ai_usage (tenant_id, call_uuid, answered_at, ended_at, billable_seconds, minute_rate_usd, cost_usd)
       VALUES (app_tenant_id(), $1, now(), now(), 60, 0.12, $2::numeric)`,
      [randomUUID(), costUsd],
    ),
  );
}

const stateOf = async (t: ProvisionedTenant, id: string) =>
  (await withTenant(app.deps.db, t.tenantId, (tx) => tx.campaign.findUniqueOrThrow({ where: { id }, select: { state: true } }))).state;

describe('the periodic billing pass', () => {
  it('suspends a running campaign once spend reaches the cap, with no request involved, and hard_block refuses new sends', async () => {
    const t = await provisionTenant(app);
    const created = await app.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name: uniqueName('billing-pass'), campaign_type: 'manual' } });
    expect(created.status).toBe(201);
    const campaignId: string = created.body.campaign.id;
    expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: t.apiKey })).status).toBe(200);
    expect((await admin(t.tenantId, '', { scheme: 'postpaid', cap_usd: '5' })).status).toBe(200);
    expect((await admin(t.tenantId, '/enforcement-mode', { mode: 'hard_block' })).status).toBe(200);

    // Spend recorded by metering, not by a billing route: only the pass can notice it.
    await spendAi(t, '5');
    await waitFor(async () => ((await stateOf(t, campaignId)) === 'suspended_balance' ? true : undefined), 30_000, 'the pass to suspend the campaign');
    const alerts = await app.request('GET', '/v1/billing/alerts', { token: t.apiKey });
    expect(alerts.status).toBe(200);
    expect(JSON.stringify(alerts.body)).toContain('100');

    const sms = await app.request('POST', '/v1/sms/messages', { token: t.apiKey, body: { to: '+12125550123', body: 'Hello. Reply STOP to opt out.' } });
    expect({ status: sms.status, code: sms.body?.error?.code }).toEqual({ status: 422, code: 'unprocessable' });
    expect(sms.body.error.message).toMatch(/cap is reached/);

    // A raise clears the block and the campaign runs again.
    expect((await admin(t.tenantId, '', { scheme: 'postpaid', cap_usd: '50' })).status).toBe(200);
    expect(await stateOf(t, campaignId)).toBe('running');
    await app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(t.tenantId, campaignId)).terminate('test cleanup').catch(() => undefined);
  });

  it('a manual dial of a blocked hard_block tenant is refused before anything is dialed', async () => {
    // The block below is written by hand with no spend behind it: this file's 300 ms pass would clear it.
    await app.deps.temporal!.workflow.getHandle(billingEnforcementWorkflowId(taskQueue)).terminate('the next test writes the block by hand');
    const t = await provisionTenant(app);
    const created = await app.request('POST', '/v1/campaigns', { token: t.apiKey, body: { name: uniqueName('billing-dial'), campaign_type: 'manual' } });
    const campaignId: string = created.body.campaign.id;
    expect((await app.request('POST', `/v1/campaigns/${campaignId}/start`, { token: t.apiKey })).status).toBe(200);
    await app.deps.temporal!.workflow.getHandle(campaignRunWorkflowId(t.tenantId, campaignId)).terminate('test cleanup').catch(() => undefined);
    // The block as the pass records it, with the campaign still running (the instant before the pass suspends it).
    await withTenantSql(app.deps.db, t.tenantId, (sql) =>
      sql.query(`INSERT INTO billing_accounts (tenant_id, scheme, enforcement_mode, blocked_reason, blocked_at) VALUES (app_tenant_id(), 'postpaid', 'hard_block', 'cap_reached', now())`),
    );
    const dialed = await app.request('POST', `/v1/campaigns/${campaignId}/dial`, { token: t.apiKey, body: { debt_id: randomUUID() } });
    expect({ status: dialed.status, code: dialed.body?.error?.code }).toEqual({ status: 422, code: 'unprocessable' });
    const attempts = await withTenant(app.deps.db, t.tenantId, (tx) => tx.callAttempt.count());
    expect(attempts).toBe(0);
  });
});
