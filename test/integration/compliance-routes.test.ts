import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { createUserSession, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

describe('GET/PUT /v1/compliance-policy', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  it('starts at version 0 with the platform defaults', async () => {
    const res = await app.request('GET', '/v1/compliance-policy', { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.compliance_policy).toEqual({
      version: 0,
      actor: null,
      created_at: null,
      policy: {
        non_dialable_debt_states: ['paid', 'settled', 'disputed', 'closed'],
        blocked_us_states: [],
        allowed_line_types: null,
        max_calls_per_day: null,
        calling_hours: null,
        unconfirmed_rules: [],
      },
    });
  });

  it('stores each PUT as a new version, fills defaults, and audits it', async () => {
    const first = await app.request('PUT', '/v1/compliance-policy', { token: tenant.apiKey, body: { blocked_us_states: ['MA'] } });
    expect(first.status).toBe(200);
    expect(first.body.compliance_policy.version).toBe(1);
    expect(first.body.compliance_policy.policy.non_dialable_debt_states).toEqual(['paid', 'settled', 'disputed', 'closed']);
    const session = await createUserSession(app, tenant);
    const second = await app.request('PUT', '/v1/compliance-policy', { token: session.token, body: { calling_hours: { start: '09:00', end: '20:00' } } });
    expect(second.body.compliance_policy.version).toBe(2);
    expect(second.body.compliance_policy.actor).toBe(`user:${session.userId}`);
    const current = await app.request('GET', '/v1/compliance-policy', { token: tenant.apiKey });
    expect(current.body.compliance_policy.policy.blocked_us_states).toEqual([]);
    expect(current.body.compliance_policy.policy.calling_hours).toEqual({ start: '09:00', end: '20:00' });
    const versions = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.compliancePolicyVersion.findMany({ orderBy: { version: 'asc' } }));
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    const audits = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.count({ where: { action: 'compliance_policy.updated' } }));
    expect(audits).toBe(2);
  });

  it.each([
    [{ surprise: true }, 'surprise'],
    [{ max_calls_per_day: 8 }, 'max_calls_per_day'],
    [{ blocked_us_states: ['Massachusetts'] }, 'blocked_us_states'],
    [{ calling_hours: { start: '9am', end: '20:00' } }, 'calling_hours'],
    [{ unconfirmed_rules: ['MADE-UP'] }, 'unconfirmed_rules'],
    [{ non_dialable_debt_states: ['lost'] }, 'non_dialable_debt_states'],
  ])('refuses %j with 400 naming the field', async (body, field) => {
    const res = await app.request('PUT', '/v1/compliance-policy', { token: tenant.apiKey, body });
    expectError(res, 400, 'bad_request');
    expect(res.body.error.message).toContain(field);
  });

  it('answers 401 without a credential and 415 for a non-JSON body', async () => {
    expectError(await app.request('GET', '/v1/compliance-policy'), 401, 'unauthorized');
    expectError(await app.request('PUT', '/v1/compliance-policy', { token: tenant.apiKey, rawBody: 'x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
  });

  it('answers 403 for a suspended tenant', async () => {
    const suspended = await provisionTenant(app);
    await app.request('POST', `/v1/admin/tenants/${suspended.tenantId}/suspend`, { token: 'test-operator-token-0123456789' });
    expectError(await app.request('GET', '/v1/compliance-policy', { token: suspended.apiKey }), 403, 'forbidden');
  });

  it('keeps policies per tenant', async () => {
    const other = await provisionTenant(app);
    const res = await app.request('GET', '/v1/compliance-policy', { token: other.apiKey });
    expect(res.body.compliance_policy.version).toBe(0);
  });
});

describe('GET /v1/campaigns/{id}/compliance-preflight', () => {
  let tenant: ProvisionedTenant;
  let campaignId: string;
  const noon = '2026-10-19T18:00:00Z'; // 12:00 MDT

  beforeAll(async () => {
    tenant = await provisionTenant(app);
    campaignId = await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      const campaign = await tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `pre-${randomUUID()}`, campaignType: 'progressive' } });
      const seed = async (i: number, opts: { consent: boolean; dnc?: boolean; state?: string }) => {
        const phone = `+1303555${String(2000 + i)}`;
        const debt = await tx.debt.create({
          data: { tenantId: tenant.tenantId, campaignId: campaign.id, externalRef: `pre-${i}-${randomUUID()}`, consumerRef: `c-${i}`, state: opts.state ?? 'open' },
        });
        await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, isPrimary: true } });
        if (opts.consent) {
          await tx.consent.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, channel: 'voice', source: 'import', grantedAt: new Date('2026-01-01') } });
        }
        if (opts.dnc) await tx.dncEntry.create({ data: { tenantId: tenant.tenantId, phoneE164: phone, source: 'api' } });
      };
      await seed(1, { consent: true });
      await seed(2, { consent: true });
      await seed(3, { consent: false });
      await seed(4, { consent: true, dnc: true });
      await seed(5, { consent: true, state: 'paid' }); // not a workable lead: never evaluated
      return campaign.id;
    });
  });

  it('evaluates the dialable leads without recording evidence', async () => {
    const res = await app.request('GET', `/v1/campaigns/${campaignId}/compliance-preflight?at=${encodeURIComponent(noon)}`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      campaign_id: campaignId,
      evaluated_at: '2026-10-19T18:00:00.000Z',
      channel: 'voice',
      leads_evaluated: 4,
      truncated: false,
      dialable: 2,
      blocked: 2,
      by_gate: { tcpa_no_consent: 1, dnc_listed: 1 },
    });
    expect(res.body.sample).toHaveLength(4);
    for (const s of res.body.sample) expect(s.phone_masked).toMatch(/^\*\*\*\d{4}$/);
    expect(res.text).not.toContain('+1303555');
    const evidence = await withTenant(app.deps.db, tenant.tenantId, async (tx) => ({
      refusals: await tx.complianceRefusal.count(),
      decisions: await tx.auditLog.count({ where: { action: 'compliance.decision' } }),
    }));
    expect(evidence).toEqual({ refusals: 0, decisions: 0 });
  });

  it('honours limit and sample, and reports truncation', async () => {
    const res = await app.request('GET', `/v1/campaigns/${campaignId}/compliance-preflight?limit=3&sample=1&at=${encodeURIComponent(noon)}`, { token: tenant.apiKey });
    expect(res.body.leads_evaluated).toBe(3);
    expect(res.body.truncated).toBe(true);
    expect(res.body.sample).toHaveLength(1);
  });

  it('refuses at night like the dialer would', async () => {
    const res = await app.request('GET', `/v1/campaigns/${campaignId}/compliance-preflight?at=${encodeURIComponent('2026-10-20T05:00:00Z')}`, { token: tenant.apiKey });
    expect(res.body.dialable).toBe(0);
    expect(res.body.by_gate.quiet_hours).toBe(2);
  });

  it.each([['limit=0'], ['limit=10001'], ['sample=101'], ['at=yesterday']])('answers 400 for %s', async (query) => {
    expectError(await app.request('GET', `/v1/campaigns/${campaignId}/compliance-preflight?${query}`, { token: tenant.apiKey }), 400, 'bad_request');
  });

  it('answers one identical 404 for unknown, malformed and foreign campaign ids', async () => {
    const other = await provisionTenant(app);
    const unknown = await app.request('GET', `/v1/campaigns/${randomUUID()}/compliance-preflight`, { token: tenant.apiKey });
    const malformed = await app.request('GET', '/v1/campaigns/not-a-uuid/compliance-preflight', { token: tenant.apiKey });
    const foreign = await app.request('GET', `/v1/campaigns/${campaignId}/compliance-preflight`, { token: other.apiKey });
    expectError(unknown, 404, 'not_found');
    expect(malformed.text).toBe(unknown.text);
    expect(foreign.text).toBe(unknown.text);
  });

  it('answers 401 without a credential', async () => {
    expectError(await app.request('GET', `/v1/campaigns/${campaignId}/compliance-preflight`), 401, 'unauthorized');
  });
});
