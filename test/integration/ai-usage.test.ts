import { createHash, randomUUID } from 'node:crypto';
import { withTenantSql } from '../../src/lib/tenancy';
import { meterAiCall } from '../../src/modules/ai-calls/ai-call.service';
import { seedLeads } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { insertAgentWidgetToken } from '../helpers/widget';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ AI_MINUTE_RATE_USD: '0.12' });
});
afterAll(async () => {
  await app?.close();
});

async function campaign(tenant: ProvisionedTenant): Promise<string> {
  const res = await app.request('POST', '/v1/campaigns', { token: tenant.apiKey, body: { name: `usage-${randomUUID()}`, campaign_type: 'ai_voice' } });
  expect(res.status).toBe(201);
  return res.body.campaign.id;
}

/** One metered row as a past metering wrote it (its own rate and cost). */
async function usage(tenant: ProvisionedTenant, answeredAt: string, seconds: number, rate: string, cost: string, campaignId: string | null = null) {
  await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
    sql.query(
      `INSERT INTO ai_usage (tenant_id, call_uuid, campaign_id, answered_at, ended_at, billable_seconds, minute_rate_usd, cost_usd)
       VALUES (app_tenant_id(), $1, $2, $3, $3::timestamptz + make_interval(secs => $4), $4, $5::numeric, $6::numeric)`,
      [randomUUID(), campaignId, answeredAt, seconds, rate, cost],
    ),
  );
}

const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

describe('GET /v1/stats/ai-usage', () => {
  let tenant: ProvisionedTenant;
  let campaignA: string;

  beforeAll(async () => {
    tenant = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
    campaignA = await campaign(tenant);
    // Two days of the window, one row exactly at `from` (inside) and one exactly at `to` (outside),
    // one before the window; each row keeps the rate it was metered under.
    await usage(tenant, '2026-03-01T00:00:00.000Z', 61, '0.1200', '0.2400', campaignA);
    await usage(tenant, '2026-03-01T13:30:00.000Z', 30, '0.1000', '0.1000');
    await usage(tenant, '2026-03-02T23:59:59.999Z', 120, '0.1200', '0.2400', campaignA);
    await usage(tenant, '2026-03-03T00:00:00.000Z', 600, '0.1200', '1.2000', campaignA);
    await usage(tenant, '2026-02-28T23:59:59.999Z', 60, '0.1200', '0.1200', campaignA);
    // Another tenant's usage never counts.
    const other = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
    await usage(other, '2026-03-01T10:00:00.000Z', 60, '0.1200', '0.1200');
  });

  const window = 'from=2026-03-01T00:00:00Z&to=2026-03-03T00:00:00Z';

  it('answers exact JSON figures over the half-open window, with X-Artifact-SHA256', async () => {
    const res = await app.request('GET', `/v1/stats/ai-usage?${window}`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      from: '2026-03-01T00:00:00.000Z',
      to: '2026-03-03T00:00:00.000Z',
      campaign_id: null,
      minute_rate_usd: '0.1200',
      calls: 3,
      billable_seconds: 211,
      billable_minutes: 5,
      estimated_cost_usd: '0.5800',
      daily: [
        { date: '2026-03-01', calls: 2, billable_seconds: 91, billable_minutes: 3, cost_usd: '0.3400' },
        { date: '2026-03-02', calls: 1, billable_seconds: 120, billable_minutes: 2, cost_usd: '0.2400' },
      ],
    });
    expect(res.headers['x-artifact-sha256']).toBe(sha256(res.text));
  });

  it('filters by campaign', async () => {
    const res = await app.request('GET', `/v1/stats/ai-usage?${window}&campaign_id=${campaignA}`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ campaign_id: campaignA, calls: 2, billable_seconds: 181, billable_minutes: 4, estimated_cost_usd: '0.4800' });
  });

  it('answers CSV for format=csv and for Accept: text/csv, hashed', async () => {
    const expected =
      'date,calls,billable_seconds,billable_minutes,cost_usd\r\n2026-03-01,2,91,3,0.3400\r\n2026-03-02,1,120,2,0.2400\r\n';
    for (const [query, headers] of [
      [`${window}&format=csv`, {}],
      [window, { accept: 'text/csv' }],
    ] as const) {
      const res = await app.request('GET', `/v1/stats/ai-usage?${query}`, { token: tenant.apiKey, headers });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      expect(res.text).toBe(expected);
      expect(res.headers['x-artifact-sha256']).toBe(sha256(expected));
    }
  });

  it('defaults to the current UTC month, every date listed', async () => {
    const res = await app.request('GET', '/v1/stats/ai-usage', { token: tenant.apiKey });
    expect(res.status).toBe(200);
    const now = new Date();
    const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    expect(res.body).toMatchObject({ from: from.toISOString(), to: to.toISOString(), calls: 0, estimated_cost_usd: '0.0000' });
    expect(res.body.daily).toHaveLength(Math.round((to.getTime() - from.getTime()) / 86_400_000));
  });

  it('answers 422 for an empty, reversed or too wide window; 400 for a malformed date or campaign id, an unknown key', async () => {
    for (const query of [
      'from=2026-03-02T00:00:00Z&to=2026-03-02T00:00:00Z',
      'from=2026-03-03T00:00:00Z&to=2026-03-02T00:00:00Z',
      'from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z',
    ]) {
      const res = await app.request('GET', `/v1/stats/ai-usage?${query}`, { token: tenant.apiKey });
      expect([query, res.status, res.body.error?.code]).toEqual([query, 422, 'unprocessable']);
    }
    for (const query of [
      'from=yesterday',
      'campaign_id=nope',
      'format=xml',
      'limit=3',
    ]) {
      const res = await app.request('GET', `/v1/stats/ai-usage?${query}`, { token: tenant.apiKey });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('bad_request');
    }
  });

  it('is management scope: 401 without a credential, 403 for a ddw_ token', async () => {
    expect((await app.request('GET', '/v1/stats/ai-usage')).status).toBe(401);
    const { token } = await insertAgentWidgetToken(app, tenant.tenantId, tenant.adminAgentId);
    const res = await app.request('GET', '/v1/stats/ai-usage', { token });
    expect(res.status).toBe(403);
  });
});

describe('metering', () => {
  it('writes one row per call uuid however often it runs: per started minute, capped at the ceiling, at the rate in force', async () => {
    const tenant = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
    const patched = await app.request('PATCH', `/v1/admin/tenants/${tenant.tenantId}`, { token: ADMIN_TOKEN, body: { ai_max_call_seconds: 90 } });
    expect(patched.status).toBe(200);
    const campaignId = await campaign(tenant);
    const [debtId] = await seedLeads(app, tenant, campaignId, ['+13035550123']);
    const callUuid = randomUUID();
    await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
      sql.query(
        `INSERT INTO call_attempts (id, tenant_id, debt_id, campaign_id, consumer_ref, debt_key, call_uuid, to_number, started_at, ai_used)
         VALUES ($1::uuid, app_tenant_id(), $2, $3, 'c', 'k', $1::text, '+13035550123', now(), true)`,
        [callUuid, debtId, campaignId],
      ),
    );
    const ref = { tenantId: tenant.tenantId, callAttemptId: callUuid, callUuid, answeredAt: '2026-03-05T10:00:00.000Z' };
    expect(await meterAiCall(app.deps, { ...ref, endedAt: '2026-03-05T10:05:00.000Z' })).toEqual({ metered: true });
    // A retry, or a replay with a later end, bills nothing more.
    expect(await meterAiCall(app.deps, { ...ref, endedAt: '2026-03-05T10:05:00.000Z' })).toEqual({ metered: false });
    expect(await meterAiCall(app.deps, { ...ref, endedAt: '2026-03-05T11:00:00.000Z' })).toEqual({ metered: false });
    const rows = await withTenantSql(app.deps.db, tenant.tenantId, (sql) =>
      sql.query('SELECT billable_seconds, minute_rate_usd::text, cost_usd::text, campaign_id FROM ai_usage'),
    );
    expect(rows).toEqual([{ billable_seconds: 90, minute_rate_usd: '0.1200', cost_usd: '0.2400', campaign_id: campaignId }]);
  });
});
