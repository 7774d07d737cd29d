import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { evaluate } from '../../src/modules/compliance/compliance.service';
import { GATE_CHAIN } from '../../src/modules/compliance/compliance.types';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

const HOUR = 3600_000;
const actor = { type: 'system', id: null };
// Noon in Denver on three days of one week (a Monday, Tuesday and Thursday); Wednesday has no refusals.
const MON = new Date('2025-03-03T19:00:00Z');
const TUE = new Date('2025-03-04T19:00:00Z');
const THU = new Date('2025-03-06T19:00:00Z');
const WEEK = 'from=2025-03-03T00:00:00Z&to=2025-03-07T00:00:00Z';

let app: TestApp;
let phoneCounter = 0;
const denverNumber = () => `+1303556${String(1000 + (++phoneCounter % 9000)).padStart(4, '0')}`;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

type Kind = 'no_consent' | 'dnc' | 'cease' | 'clean';

async function seedDebt(tenant: ProvisionedTenant, kind: Kind) {
  const phone = denverNumber();
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const debt = await tx.debt.create({
      data: {
        tenantId: tenant.tenantId,
        externalRef: `ext-${randomUUID()}`,
        consumerRef: `c-${randomUUID()}`,
        ceaseAndDesistAt: kind === 'cease' ? new Date('2025-01-01T00:00:00Z') : null,
      },
    });
    await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, isPrimary: true, timezone: 'America/Denver' } });
    if (kind !== 'no_consent') {
      await tx.consent.create({
        data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, channel: 'voice', source: 'import', grantedAt: new Date('2025-01-01T00:00:00Z') },
      });
    }
    if (kind === 'dnc') await tx.dncEntry.create({ data: { tenantId: tenant.tenantId, phoneE164: phone, source: 'api' } });
    return { debtId: debt.id, phone };
  });
}

async function attempt(tenant: ProvisionedTenant, fixture: { debtId: string; phone: string }, now: Date, campaignId: string | null = null) {
  const [decision] = await evaluate(
    app.deps,
    tenant.tenantId,
    [{ debtId: fixture.debtId, phone: fixture.phone, channel: 'voice', campaignId, initiation: 'automated', artificialVoice: false }],
    { actor, now },
  );
  return decision!;
}

async function createCampaign(tenant: ProvisionedTenant) {
  const campaign = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `c-${randomUUID()}` } }));
  return campaign.id;
}

const zeros = () => Object.fromEntries(GATE_CHAIN.map((g) => [g, 0]));
const gates = (counts: Record<string, number>) => ({ ...zeros(), ...counts });

describe('GET /v1/stats/blocked', () => {
  let tenant: ProvisionedTenant;
  let other: ProvisionedTenant;
  let c1: string;
  let c2: string;
  let foreignCampaign: string;

  beforeAll(async () => {
    tenant = await provisionTenant(app);
    other = await provisionTenant(app);
    c1 = await createCampaign(tenant);
    c2 = await createCampaign(tenant);
    foreignCampaign = await createCampaign(other);

    const noConsent = await seedDebt(tenant, 'no_consent');
    const listed = await seedDebt(tenant, 'dnc');
    const ceased = await seedDebt(tenant, 'cease');
    const clean = await seedDebt(tenant, 'clean');
    // Monday: one (debt, gate, campaign, day) row refused twice, one with c1, one DNC with c2.
    expect((await attempt(tenant, noConsent, MON)).gate).toBe('tcpa_no_consent');
    await attempt(tenant, noConsent, new Date(MON.getTime() + HOUR));
    await attempt(tenant, noConsent, MON, c1);
    expect((await attempt(tenant, listed, MON, c2)).gate).toBe('dnc_listed');
    // An allowed decision is not a prevented violation.
    expect((await attempt(tenant, clean, MON)).allowed).toBe(true);
    // Tuesday: c1 twice.
    await attempt(tenant, noConsent, TUE, c1);
    expect((await attempt(tenant, ceased, TUE, c1)).gate).toBe('cease_and_desist');
    // Thursday: outside any campaign.
    await attempt(tenant, listed, THU);
    // The other tenant's refusals never show in this tenant's counts.
    await attempt(other, await seedDebt(other, 'no_consent'), MON, foreignCampaign);
  });

  it('counts refusal rows by gate and UTC day, every gate and every date present', async () => {
    const res = await app.request('GET', `/v1/stats/blocked?${WEEK}`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      from: '2025-03-03T00:00:00.000Z',
      to: '2025-03-07T00:00:00.000Z',
      campaign_id: null,
      total: 6,
      by_gate: gates({ tcpa_no_consent: 3, dnc_listed: 2, cease_and_desist: 1 }),
      daily: [
        { date: '2025-03-03', total: 3, by_gate: gates({ tcpa_no_consent: 2, dnc_listed: 1 }) },
        { date: '2025-03-04', total: 2, by_gate: gates({ tcpa_no_consent: 1, cease_and_desist: 1 }) },
        { date: '2025-03-05', total: 0, by_gate: zeros() },
        { date: '2025-03-06', total: 1, by_gate: gates({ dnc_listed: 1 }) },
      ],
    });
    expect(Object.keys(res.body.by_gate)).toEqual([...GATE_CHAIN]);
  });

  it('selects the UTC dates a half-open window overlaps', async () => {
    const res = await app.request('GET', '/v1/stats/blocked?from=2025-03-04T12:00:00Z&to=2025-03-04T13:00:00Z', { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.daily.map((d: any) => d.date)).toEqual(['2025-03-04']);
    expect(res.body.total).toBe(2);
    // `to` is exclusive: ending at Thursday 00:00Z leaves Thursday out.
    const upToWed = await app.request('GET', '/v1/stats/blocked?from=2025-03-03T00:00:00Z&to=2025-03-06T00:00:00Z', { token: tenant.apiKey });
    expect(upToWed.body.daily.map((d: any) => d.date)).toEqual(['2025-03-03', '2025-03-04', '2025-03-05']);
    expect(upToWed.body.total).toBe(5);
    // Offsets are read as instants: Monday 20:00 in Denver is already Tuesday in UTC.
    const offset = await app.request('GET', `/v1/stats/blocked?from=${encodeURIComponent('2025-03-03T20:00:00-07:00')}&to=${encodeURIComponent('2025-03-04T20:00:00-07:00')}`, {
      token: tenant.apiKey,
    });
    expect(offset.body.from).toBe('2025-03-04T03:00:00.000Z');
    expect(offset.body.daily.map((d: any) => d.date)).toEqual(['2025-03-04', '2025-03-05']);
    expect(offset.body.total).toBe(2);
  });

  it('filters by campaign; an unknown or foreign campaign gives zeros, not 404', async () => {
    const res = await app.request('GET', `/v1/stats/blocked?${WEEK}&campaign_id=${c1}`, { token: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.campaign_id).toBe(c1);
    expect(res.body.total).toBe(3);
    expect(res.body.by_gate).toEqual(gates({ tcpa_no_consent: 2, cease_and_desist: 1 }));
    expect(res.body.daily.map((d: any) => d.total)).toEqual([1, 2, 0, 0]);

    const upper = await app.request('GET', `/v1/stats/blocked?${WEEK}&campaign_id=${c2.toUpperCase()}`, { token: tenant.apiKey });
    expect(upper.body.total).toBe(1);
    expect(upper.body.by_gate.dnc_listed).toBe(1);

    for (const campaignId of [foreignCampaign, randomUUID()]) {
      const none = await app.request('GET', `/v1/stats/blocked?${WEEK}&campaign_id=${campaignId}`, { token: tenant.apiKey });
      expect(none.status).toBe(200);
      expect(none.body.total).toBe(0);
      expect(none.body.by_gate).toEqual(zeros());
      expect(none.body.daily).toHaveLength(4);
      expect(none.body.daily.every((d: any) => d.total === 0)).toBe(true);
    }
  });

  it('isolates tenants: the other tenant counts only its own refusals', async () => {
    const res = await app.request('GET', `/v1/stats/blocked?${WEEK}`, { token: other.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(1);
    expect(res.body.by_gate).toEqual(gates({ tcpa_no_consent: 1 }));
    const fresh = await provisionTenant(app);
    const empty = await app.request('GET', `/v1/stats/blocked?${WEEK}`, { token: fresh.apiKey });
    expect(empty.body.total).toBe(0);
    expect(empty.body.daily.map((d: any) => d.total)).toEqual([0, 0, 0, 0]);
  });

  it('defaults to the trailing 30 UTC days ending now', async () => {
    const fresh = await provisionTenant(app);
    const before = Date.now();
    await attempt(fresh, await seedDebt(fresh, 'no_consent'), new Date(before - HOUR));
    // Just outside the default window: 30 days before today's UTC date.
    const today = new Date(new Date(before).toISOString().slice(0, 10) + 'T00:00:00Z');
    await attempt(fresh, await seedDebt(fresh, 'no_consent'), new Date(today.getTime() - 29 * 24 * HOUR - 1));
    const res = await app.request('GET', '/v1/stats/blocked', { token: fresh.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.daily).toHaveLength(30);
    expect(res.body.from).toBe(new Date(today.getTime() - 29 * 24 * HOUR).toISOString());
    expect(res.body.daily[0].date).toBe(res.body.from.slice(0, 10));
    expect(Date.parse(res.body.to)).toBeGreaterThanOrEqual(before);
    expect(res.body.daily[29].date).toBe(res.body.to.slice(0, 10));
    expect(res.body.total).toBe(1);
    const day = new Date(before - HOUR).toISOString().slice(0, 10);
    expect(res.body.daily.find((d: any) => d.date === day).by_gate.tcpa_no_consent).toBe(1);
    // Only `from`: the window runs to now.
    const onlyFrom = await app.request('GET', `/v1/stats/blocked?from=${encodeURIComponent(new Date(before - 2 * HOUR).toISOString())}`, { token: fresh.apiKey });
    expect(onlyFrom.body.total).toBe(1);
  });

  it('answers 400 for bad timestamps, bad campaign ids and repeated values; 422 for from after to and windows over 366 days', async () => {
    for (const query of ['from=2025-03-07T00:00:00Z&to=2025-03-03T00:00:00Z', 'from=2099-01-01T00:00:00Z', 'from=2024-01-01T00:00:00Z&to=2025-03-07T00:00:00Z']) {
      const res = await app.request('GET', `/v1/stats/blocked?${query}`, { token: tenant.apiKey });
      expect([query, res.status, res.body.error?.code]).toEqual([query, 422, 'unprocessable']);
    }
    const bad = [
      'from=yesterday',
      'to=2025-03-03',
      'to=2025-02-30T00:00:00Z',
      'campaign_id=not-a-uuid',
      'from=2025-03-03T00:00:00Z&from=2025-03-04T00:00:00Z',
    ];
    for (const query of bad) {
      const res = await app.request('GET', `/v1/stats/blocked?${query}`, { token: tenant.apiKey });
      expect([query, res.status, res.body.error?.code]).toEqual([query, 400, 'bad_request']);
    }
    const equal = await app.request('GET', '/v1/stats/blocked?from=2025-03-03T00:00:00Z&to=2025-03-03T00:00:00Z', { token: tenant.apiKey });
    expect(equal.status).toBe(200);
    expect(equal.body).toMatchObject({ total: 0, daily: [] });
  });

  it('answers 401 without a valid credential', async () => {
    expect((await app.request('GET', '/v1/stats/blocked')).status).toBe(401);
    const res = await app.request('GET', '/v1/stats/blocked', { token: 'dd_not-a-real-key' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthorized');
  });
});
