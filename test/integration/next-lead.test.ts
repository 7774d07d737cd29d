import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

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

/** A progressive campaign; Denver (303) numbers, so the engine judges them in America/Denver. */
async function campaignWith(tenant: ProvisionedTenant, leads: { consent: boolean; dnc?: boolean }[]) {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const campaign = await tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `nl-${randomUUID()}`, campaignType: 'progressive' } });
    const ids: string[] = [];
    for (const [i, lead] of leads.entries()) {
      const phone = `+1303555${String(4000 + i)}`;
      const debt = await tx.debt.create({
        data: { tenantId: tenant.tenantId, campaignId: campaign.id, externalRef: `nl-${i}-${randomUUID()}`, consumerRef: `c-${i}`, createdAt: new Date(Date.now() - (100 - i) * 1000) },
      });
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, isPrimary: true } });
      if (lead.consent) await tx.consent.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, channel: 'voice', source: 'import' } });
      if (lead.dnc) await tx.dncEntry.create({ data: { tenantId: tenant.tenantId, phoneE164: phone, source: 'api' } });
      ids.push(debt.id);
    }
    return { campaignId: campaign.id, ids };
  });
}

const NOON_DENVER = encodeURIComponent('2026-10-19T18:00:00Z');
const NIGHT_DENVER = encodeURIComponent('2026-10-20T05:00:00Z');

describe('GET /v1/campaigns/{id}/next-lead', () => {
  it('skips leads the engine would refuse and names the first one it would dial, recording nothing', async () => {
    const tenant = await provisionTenant(app);
    const { campaignId, ids } = await campaignWith(tenant, [{ consent: false }, { consent: true, dnc: true }, { consent: true }, { consent: true }]);
    const res = await app.request('GET', `/v1/campaigns/${campaignId}/next-lead?at=${NOON_DENVER}`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.lead).toMatchObject({ source: 'lead', debt_id: ids[2], callback_id: null, phone_masked: '***4002', zones: ['America/Denver'] });
    expect(res.body).toMatchObject({ evaluated_at: '2026-10-19T18:00:00.000Z', candidates_checked: 3, skipped_by_gate: { tcpa_no_consent: 1, dnc_listed: 1 } });
    expect(res.text).not.toContain('+1303555');
    const night = await app.request('GET', `/v1/campaigns/${campaignId}/next-lead?at=${NIGHT_DENVER}`, { token: tenant.apiKey });
    expect(night.body).toMatchObject({ lead: null, candidates_checked: 4, skipped_by_gate: { tcpa_no_consent: 1, dnc_listed: 1, quiet_hours: 2 } });
    const evidence = await withTenant(app.deps.db, tenant.tenantId, async (tx) => ({
      decisions: await tx.auditLog.count({ where: { action: 'compliance.decision' } }),
      refusals: await tx.complianceRefusal.count(),
    }));
    expect(evidence).toEqual({ decisions: 0, refusals: 0 });
  });

  it('puts a due callback before fresh leads', async () => {
    const tenant = await provisionTenant(app);
    const { campaignId, ids } = await campaignWith(tenant, [{ consent: true }, { consent: true }]);
    const callback = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.callback.create({ data: { tenantId: tenant.tenantId, debtId: ids[1]!, campaignId, contactPhone: '+13035554001', scheduledAt: new Date('2026-10-19T17:00:00Z') } }),
    );
    const res = await app.request('GET', `/v1/campaigns/${campaignId}/next-lead?at=${NOON_DENVER}`, { token: tenant.apiKey });
    expect(res.body.lead).toMatchObject({ source: 'callback', callback_id: callback.id, debt_id: ids[1] });
  });

  it('previews only the callbacks the campaign would claim: not one naming its agent, nor one resting after a refusal', async () => {
    const tenant = await provisionTenant(app);
    const { campaignId, ids } = await campaignWith(tenant, [{ consent: true }, { consent: true }, { consent: true }]);
    await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      const due = new Date('2026-10-19T17:00:00Z');
      await tx.callback.create({
        data: { tenantId: tenant.tenantId, debtId: ids[1]!, campaignId, contactPhone: '+13035554001', scheduledAt: due, agentId: tenant.adminAgentId, priority: 5 },
      });
      await tx.callback.create({
        data: { tenantId: tenant.tenantId, debtId: ids[2]!, campaignId, contactPhone: '+13035554002', scheduledAt: due, retryAt: new Date('2026-10-19T19:00:00Z'), priority: 5 },
      });
    });
    const res = await app.request('GET', `/v1/campaigns/${campaignId}/next-lead?at=${NOON_DENVER}`, { token: tenant.apiKey });
    expect(res.body.lead).toMatchObject({ source: 'lead', callback_id: null, debt_id: ids[0] });
    const later = await app.request('GET', `/v1/campaigns/${campaignId}/next-lead?at=${encodeURIComponent('2026-10-19T19:00:00Z')}`, { token: tenant.apiKey });
    expect(later.body.lead).toMatchObject({ source: 'callback', debt_id: ids[2] });
  });

  it('answers a null lead for an empty campaign', async () => {
    const tenant = await provisionTenant(app);
    const { campaignId } = await campaignWith(tenant, []);
    const res = await app.request('GET', `/v1/campaigns/${campaignId}/next-lead`, { token: tenant.apiKey });
    expect(res.body).toMatchObject({ campaign_id: campaignId, lead: null, candidates_checked: 0, skipped_by_gate: {} });
  });

  it('answers one identical 404 for unknown, malformed and foreign campaigns, and 401 without a credential', async () => {
    const tenant = await provisionTenant(app);
    const other = await provisionTenant(app);
    const { campaignId } = await campaignWith(tenant, []);
    const unknown = await app.request('GET', `/v1/campaigns/${randomUUID()}/next-lead`, { token: tenant.apiKey });
    expectError(unknown, 404, 'not_found');
    expect((await app.request('GET', '/v1/campaigns/x/next-lead', { token: tenant.apiKey })).text).toBe(unknown.text);
    expect((await app.request('GET', `/v1/campaigns/${campaignId}/next-lead`, { token: other.apiKey })).text).toBe(unknown.text);
    expectError(await app.request('GET', `/v1/campaigns/${campaignId}/next-lead`), 401, 'unauthorized');
    expectError(await app.request('GET', `/v1/campaigns/${campaignId}/next-lead?at=noon`, { token: tenant.apiKey }), 400, 'bad_request');
  });
});
