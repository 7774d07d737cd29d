import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { createDatabase } from '../../src/lib/db';
import { withTenant } from '../../src/lib/tenancy';
import { evaluate } from '../../src/modules/compliance/compliance.service';
import type { DecisionRequest } from '../../src/modules/compliance/compliance.types';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

// 12:00 EDT on a Monday, after the NYC rule took effect.
const NOW = new Date('2026-10-19T16:00:00Z');
const HOUR = 3600_000;
const DAY = 24 * HOUR;

let app: TestApp;
const actor = { type: 'system', id: null };

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

let phoneCounter = 0;
/** A Boston (617) number: America/New_York, area-code state MA. */
function bostonNumber(): string {
  phoneCounter += 1;
  return `+1617555${String(1000 + (phoneCounter % 9000)).padStart(4, '0')}`;
}
/** A Denver (303) number: America/Denver, no state cap. */
function denverNumber(): string {
  phoneCounter += 1;
  return `+1303555${String(1000 + (phoneCounter % 9000)).padStart(4, '0')}`;
}

interface Fixture {
  debtId: string;
  phone: string;
}

async function seedDebt(
  tenant: ProvisionedTenant,
  opts: { phone?: string; consent?: boolean; consumerRef?: string; debtType?: string; accountNumber?: string; campaignId?: string | null; usState?: string } = {},
): Promise<Fixture> {
  const phone = opts.phone ?? denverNumber();
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const debt = await tx.debt.create({
      data: {
        tenantId: tenant.tenantId,
        externalRef: `ext-${randomUUID()}`,
        consumerRef: opts.consumerRef ?? `c-${randomUUID()}`,
        debtType: opts.debtType ?? 'other',
        accountNumber: opts.accountNumber ?? null,
        campaignId: opts.campaignId ?? null,
      },
    });
    await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, isPrimary: true, usState: opts.usState ?? null } });
    if (opts.consent !== false) {
      await tx.consent.create({
        data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, channel: 'voice', source: 'import', grantedAt: new Date('2026-01-05T00:00:00Z') },
      });
    }
    return { debtId: debt.id, phone };
  });
}

async function seedCalls(tenant: ProvisionedTenant, fixture: Fixture, startedAts: Date[], disposition: string | null = 'no_answer') {
  await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    for (const startedAt of startedAts) {
      await tx.callAttempt.create({
        data: {
          tenantId: tenant.tenantId,
          debtId: fixture.debtId,
          consumerRef: 'x',
          debtKey: 'x',
          toNumber: fixture.phone,
          startedAt,
          disposition,
        },
      });
    }
  });
}

/** Outbound texts of the SMS ledger: an original and, unless `accepted` is false, the provider's `sent`. */
async function seedTexts(tenant: ProvisionedTenant, fixture: Fixture, occurredAts: Date[], opts: { accepted?: boolean; kind?: string } = {}) {
  await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    for (const occurredAt of occurredAts) {
      const original = await tx.smsMessage.create({
        data: { tenantId: tenant.tenantId, direction: 'outbound', status: 'queued', toE164: fixture.phone, body: 'x', debtId: fixture.debtId, occurredAt, kind: opts.kind ?? null },
      });
      await tx.smsMessage.create({
        data: {
          tenantId: tenant.tenantId,
          direction: 'outbound',
          status: opts.accepted === false ? 'failed' : 'sent',
          toE164: fixture.phone,
          debtId: fixture.debtId,
          occurredAt,
          correctsId: original.id,
        },
      });
    }
  });
}

function voice(fixture: Fixture, over: Partial<DecisionRequest> = {}): DecisionRequest {
  return { debtId: fixture.debtId, phone: fixture.phone, channel: 'voice', campaignId: null, initiation: 'automated', artificialVoice: false, ...over };
}

async function decideOne(tenant: ProvisionedTenant, request: DecisionRequest, now = NOW) {
  const [decision] = await evaluate(app.deps, tenant.tenantId, [request], { actor, now });
  return decision!;
}

describe('compliance engine against PostgreSQL', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  it('allows a clean call and records the decision in the audit chain with its inputs and versions', async () => {
    const fixture = await seedDebt(tenant);
    const decision = await decideOne(tenant, voice(fixture));
    expect(decision.allowed).toBe(true);
    expect(decision.decisionId).toMatch(/^[0-9a-f-]{36}$/);
    const entry = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findUniqueOrThrow({ where: { id: decision.decisionId! } }));
    expect(entry.action).toBe('compliance.decision');
    expect(entry.subjectId).toBe(fixture.debtId);
    const payload = entry.payload as Record<string, any>;
    expect(payload).toMatchObject({ decision_id: decision.decisionId, allowed: true, gate: null, policy_version: 0, phone: fixture.phone });
    expect(payload.rules_version).toBe(decision.rulesVersion);
    expect(payload.checks).toHaveLength(10);
    expect(payload.facts.number_zones).toEqual(['America/Denver']);
    expect(entry.occurredAt.toISOString()).toBe(NOW.toISOString());
  });

  it('stores refusals one row per (debt, gate, campaign, UTC day), counting repeats', async () => {
    const fixture = await seedDebt(tenant, { consent: false });
    const campaign = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `c-${randomUUID()}` } }));
    const first = await decideOne(tenant, voice(fixture));
    const second = await decideOne(tenant, voice(fixture), new Date(NOW.getTime() + HOUR));
    await decideOne(tenant, voice(fixture, { campaignId: campaign.id }));
    await decideOne(tenant, voice(fixture), new Date(NOW.getTime() + DAY));
    expect(first.gate).toBe('tcpa_no_consent');
    const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.complianceRefusal.findMany({ where: { debtId: fixture.debtId }, orderBy: [{ day: 'asc' }, { firstAt: 'asc' }] }),
    );
    expect(rows.map((r) => [r.gate, r.campaignId, r.day.toISOString().slice(0, 10), r.refusals])).toEqual([
      ['tcpa_no_consent', null, '2026-10-19', 2],
      ['tcpa_no_consent', campaign.id, '2026-10-19', 1],
      ['tcpa_no_consent', null, '2026-10-20', 1],
    ]);
    expect(rows[0]!.firstDecisionId).toBe(first.decisionId);
    expect(rows[0]!.lastDecisionId).toBe(second.decisionId);
  });

  it('aggregates several refusals of one batch into the same evidence row', async () => {
    const fixture = await seedDebt(tenant, { consent: false });
    const decisions = await evaluate(app.deps, tenant.tenantId, [voice(fixture), voice(fixture), voice(fixture)], { actor, now: NOW });
    expect(decisions.every((d) => d.gate === 'tcpa_no_consent')).toBe(true);
    const rows = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.complianceRefusal.findMany({ where: { debtId: fixture.debtId } }));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.refusals).toBe(3);
  });

  describe('Regulation F 7-in-7 window in the CDR', () => {
    it('counts the last 7 × 24 hours: the 8th call is refused, a call just outside the window is not counted', async () => {
      const fixture = await seedDebt(tenant);
      await seedCalls(tenant, fixture, Array.from({ length: 6 }, (_, i) => new Date(NOW.getTime() - (i + 1) * DAY + 60_000)));
      await seedCalls(tenant, fixture, [new Date(NOW.getTime() - 7 * DAY - 60_000)]);
      expect((await decideOne(tenant, voice(fixture))).allowed).toBe(true);
      await seedCalls(tenant, fixture, [new Date(NOW.getTime() - 7 * DAY + 60_000)]);
      const refused = await decideOne(tenant, voice(fixture));
      expect(refused.gate).toBe('regf_7in7');
      expect((await decideOne(tenant, voice(fixture), new Date(NOW.getTime() + 2 * 60_000))).allowed).toBe(true);
    });

    it('does not count attempts that were never placed, nor corrections', async () => {
      const fixture = await seedDebt(tenant);
      await seedCalls(tenant, fixture, Array.from({ length: 6 }, () => new Date(NOW.getTime() - HOUR)));
      await seedCalls(tenant, fixture, Array.from({ length: 3 }, () => new Date(NOW.getTime() - HOUR)), 'not_placed');
      const original = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callAttempt.findFirstOrThrow({ where: { debtId: fixture.debtId } }));
      await withTenant(app.deps.db, tenant.tenantId, (tx) =>
        tx.callAttempt.create({
          data: { tenantId: tenant.tenantId, debtId: fixture.debtId, consumerRef: 'x', debtKey: 'x', toNumber: fixture.phone, startedAt: new Date(NOW.getTime() - HOUR), disposition: 'busy', correctsId: original.id },
        }),
      );
      expect((await decideOne(tenant, voice(fixture))).allowed).toBe(true);
    });

    it('adds the previous system’s reported calls for seven days after the report', async () => {
      const fixture = await seedDebt(tenant);
      await seedCalls(tenant, fixture, Array.from({ length: 3 }, () => new Date(NOW.getTime() - HOUR)));
      await withTenant(app.deps.db, tenant.tenantId, (tx) =>
        tx.debtPriorAttempt.create({ data: { tenantId: tenant.tenantId, debtId: fixture.debtId, attempts: 4, reportedAt: new Date(NOW.getTime() - 6 * DAY) } }),
      );
      expect((await decideOne(tenant, voice(fixture))).gate).toBe('regf_7in7');
      expect((await decideOne(tenant, voice(fixture), new Date(NOW.getTime() + DAY + HOUR))).allowed).toBe(true);
    });

    it('counts every student loan of the consumer serviced under one account number as one debt', async () => {
      const consumerRef = `c-${randomUUID()}`;
      const a = await seedDebt(tenant, { consumerRef, debtType: 'student_loan', accountNumber: 'SL-1' });
      const b = await seedDebt(tenant, { consumerRef, debtType: 'student_loan', accountNumber: 'SL-1' });
      const other = await seedDebt(tenant, { consumerRef, debtType: 'student_loan', accountNumber: 'SL-2' });
      await seedCalls(tenant, a, Array.from({ length: 7 }, () => new Date(NOW.getTime() - HOUR)));
      expect((await decideOne(tenant, voice(b))).gate).toBe('regf_7in7');
      expect((await decideOne(tenant, voice(other))).allowed).toBe(true);
    });

    it('refuses calls through day 7 after a conversation', async () => {
      const fixture = await seedDebt(tenant);
      // The conversation comes from an agent's right-party disposition of an answered call.
      const answered = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
        tx.callAttempt.create({
          data: {
            tenantId: tenant.tenantId,
            debtId: fixture.debtId,
            consumerRef: 'x',
            debtKey: 'x',
            toNumber: fixture.phone,
            startedAt: new Date(NOW.getTime() - 2 * DAY),
            answeredAt: new Date(NOW.getTime() - 2 * DAY + 5_000),
            disposition: 'answered_human',
          },
        }),
      );
      const disposed = await app.request('POST', `/v1/call_attempts/${answered.id}/disposition`, { token: tenant.apiKey, body: { disposition: 'conversation' } });
      expect(disposed.status).toBe(201);
      expect((await decideOne(tenant, voice(fixture))).gate).toBe('regf_post_contact');
      expect((await decideOne(tenant, voice(fixture), new Date(NOW.getTime() + 6 * DAY))).gate).not.toBe('regf_post_contact');
    });
  });

  describe('state caps', () => {
    it('counts Massachusetts per debt from the CDR: the third communication in 7 days is refused', async () => {
      const fixture = await seedDebt(tenant, { phone: bostonNumber() });
      await seedCalls(tenant, fixture, [new Date(NOW.getTime() - 2 * DAY)]);
      expect((await decideOne(tenant, voice(fixture))).allowed).toBe(true);
      await seedCalls(tenant, fixture, [new Date(NOW.getTime() - DAY)]);
      const refused = await decideOne(tenant, voice(fixture));
      expect(refused.gate).toBe('state_limit');
      expect(refused.reason).toContain('MA-940CMR7.04');
    });

    it('counts every text sent toward the state cap from its queued row, whatever the provider answered, but not toward Reg F’s call cap', async () => {
      const fixture = await seedDebt(tenant, { phone: bostonNumber() });
      // A keyword confirmation is the consumer's own request: not counted.
      await seedTexts(tenant, fixture, [new Date(NOW.getTime() - DAY)], { kind: 'stop_confirmation' });
      // A text the provider refused (or never answered) was still an attempt (NYC counts attempts).
      await seedTexts(tenant, fixture, [new Date(NOW.getTime() - 2 * DAY)], { accepted: false });
      expect((await decideOne(tenant, voice(fixture))).allowed).toBe(true);
      await seedTexts(tenant, fixture, [new Date(NOW.getTime() - DAY)]);
      const refused = await decideOne(tenant, voice(fixture));
      expect(refused.gate).toBe('state_limit');

      const elsewhere = await seedDebt(tenant);
      await seedTexts(tenant, elsewhere, Array.from({ length: 8 }, () => new Date(NOW.getTime() - HOUR)));
      expect((await decideOne(tenant, voice(elsewhere))).allowed).toBe(true);
    });

    it('counts Washington per debtor across that debtor’s debts', async () => {
      const consumerRef = `wa-${randomUUID()}`;
      const one = await seedDebt(tenant, { consumerRef, usState: 'WA' });
      const two = await seedDebt(tenant, { consumerRef, usState: 'WA' });
      await seedCalls(tenant, one, Array.from({ length: 3 }, () => new Date(NOW.getTime() - DAY)));
      expect((await decideOne(tenant, voice(two))).gate).toBe('state_limit');
    });
  });

  it('refuses a number reported reassigned after the consent date', async () => {
    const fixture = await seedDebt(tenant);
    await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.reassignedNumber.create({ data: { tenantId: tenant.tenantId, phoneE164: fixture.phone, disconnectedOn: new Date('2026-05-01') } }),
    );
    expect((await decideOne(tenant, voice(fixture))).gate).toBe('number_reassigned');
  });

  it('refuses at night in the destination zone and allows the same number at noon', async () => {
    const fixture = await seedDebt(tenant);
    expect((await decideOne(tenant, voice(fixture), new Date('2026-10-20T04:00:00Z'))).gate).toBe('quiet_hours'); // 22:00 MDT
    expect((await decideOne(tenant, voice(fixture), new Date('2026-10-20T18:00:00Z'))).allowed).toBe(true);
  });

  it('cites the tenant policy version it applied', async () => {
    const fixture = await seedDebt(tenant);
    const put = await app.request('PUT', '/v1/compliance-policy', { token: tenant.apiKey, body: { max_calls_per_day: 1 } });
    expect(put.status).toBe(200);
    const version = put.body.compliance_policy.version as number;
    await seedCalls(tenant, fixture, [new Date(NOW.getTime() - HOUR)]);
    const refused = await decideOne(tenant, voice(fixture));
    expect(refused.gate).toBe('tenant_policy');
    expect(refused.policyVersion).toBe(version);
    await app.request('PUT', '/v1/compliance-policy', { token: tenant.apiKey, body: {} });
  });

  it('records nothing on a dry run', async () => {
    const fixture = await seedDebt(tenant, { consent: false });
    const [decision] = await evaluate(app.deps, tenant.tenantId, [voice(fixture)], { actor, now: NOW, dryRun: true });
    expect(decision!.gate).toBe('tcpa_no_consent');
    expect(decision!.decisionId).toBeNull();
    const evidence = await withTenant(app.deps.db, tenant.tenantId, async (tx) => ({
      refusals: await tx.complianceRefusal.count({ where: { debtId: fixture.debtId } }),
      audit: await tx.auditLog.count({ where: { subjectId: fixture.debtId } }),
    }));
    expect(evidence).toEqual({ refusals: 0, audit: 0 });
  });

  describe('fails closed', () => {
    it('refuses every request when the database errors, and carries no decision id', async () => {
      const fixture = await seedDebt(tenant);
      const broken = createDatabase(app.config.appDatabaseUrl.replace(/\/[^/]+$/, '/no_such_database'), 1);
      const deps = { ...app.deps, db: broken };
      try {
        const decisions = await evaluate(deps, tenant.tenantId, [voice(fixture), voice(fixture)], { actor, now: NOW });
        expect(decisions).toHaveLength(2);
        for (const d of decisions) {
          expect(d.allowed).toBe(false);
          expect(d.gate).toBe('tenant_policy');
          expect(d.decisionId).toBeNull();
          expect(d.reason).toContain('could not decide');
        }
      } finally {
        await broken.close();
      }
    });

    it('refuses when a query of the batch fails (an id that is not a uuid)', async () => {
      const [decision] = await evaluate(app.deps, tenant.tenantId, [voice({ debtId: 'not-a-uuid', phone: '+13035550100' })], { actor, now: NOW });
      expect(decision!.allowed).toBe(false);
      expect(decision!.decisionId).toBeNull();
    });

    it('refuses an unknown debt', async () => {
      const decision = await decideOne(tenant, voice({ debtId: randomUUID(), phone: denverNumber() }));
      expect(decision.allowed).toBe(false);
    });
  });

  it('never reads another tenant’s facts', async () => {
    const other = await provisionTenant(app);
    const fixture = await seedDebt(tenant);
    const decision = await decideOne(other, voice(fixture));
    expect(decision.gate).toBe('tcpa_no_consent');
    // Seen from the owner side (no RLS): no refusal row anywhere references the foreign debt.
    const owner = new Client({ connectionString: app.config.ownerDatabaseUrl });
    await owner.connect();
    try {
      const { rows } = await owner.query('SELECT count(*)::int AS n FROM compliance_refusals WHERE debt_id = $1', [fixture.debtId]);
      expect(rows[0].n).toBe(0);
    } finally {
      await owner.end();
    }
  });
});
