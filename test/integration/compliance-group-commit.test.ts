import { randomUUID } from 'node:crypto';
import { Client, type PoolClient } from 'pg';
import { createDatabase, type Database } from '../../src/lib/db';
import { withTenant } from '../../src/lib/tenancy';
import { evaluate } from '../../src/modules/compliance/compliance.service';
import type { DecisionRequest } from '../../src/modules/compliance/compliance.types';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

// 12:00 in Denver on a Monday: a Denver number with consent is allowed.
const NOW = new Date('2026-10-19T18:00:00Z');

let app: TestApp;
let tenant: ProvisionedTenant;
const actor = { type: 'system', id: null };

beforeAll(async () => {
  app = await startTestApp();
  tenant = await provisionTenant(app);
});
afterAll(async () => {
  await app.close();
});

let serial = 0;
interface Fixture {
  debtId: string;
  phone: string;
}

async function seedDebts(count: number, opts: { consent: boolean }): Promise<Fixture[]> {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const out: Fixture[] = [];
    for (let i = 0; i < count; i += 1) {
      serial += 1;
      const phone = `+1303555${String(1000 + (serial % 9000)).padStart(4, '0')}`;
      const debt = await tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef: `gc-${randomUUID()}`, consumerRef: `c-${randomUUID()}` } });
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, isPrimary: true } });
      if (opts.consent) {
        await tx.consent.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, channel: 'voice', source: 'import', grantedAt: new Date('2026-01-05T00:00:00Z') } });
      }
      out.push({ debtId: debt.id, phone });
    }
    return out;
  });
}

function voice(f: Fixture, over: Partial<DecisionRequest> = {}): DecisionRequest {
  return { debtId: f.debtId, phone: f.phone, channel: 'voice', campaignId: null, initiation: 'automated', artificialVoice: false, ...over };
}

/** Audit entries by id, seen by the owner (no RLS), with the transaction that wrote each (xmin). */
async function auditEntries(ids: string[]): Promise<Map<string, { subject_id: string; xmin: string; payload: Record<string, any> }>> {
  const owner = new Client({ connectionString: app.config.ownerDatabaseUrl });
  await owner.connect();
  try {
    const { rows } = await owner.query('SELECT id, subject_id, xmin::text AS xmin, payload FROM audit_log WHERE id = ANY ($1::uuid[])', [ids]);
    return new Map(rows.map((r) => [r.id, r]));
  } finally {
    await owner.end();
  }
}

async function auditCountFor(debtIds: string[]): Promise<number> {
  return withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.count({ where: { subjectType: 'debt', subjectId: { in: debtIds } } }));
}

/** A private pool of one connection whose every message to PostgreSQL is recorded. */
function recordedDatabase(): { db: Database; messages: string[] } {
  const db = createDatabase(app.config.appDatabaseUrl, 1);
  const messages: string[] = [];
  db.pool.on('connect', (client: PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const q = args[0] as string | { text: string };
      messages.push(typeof q === 'string' ? q : q.text);
      return query(...args);
    };
  });
  return { db, messages };
}

describe('group commit of standalone decisions', () => {
  it('decides concurrent callers together in shared transactions, each with its own decision and evidence', async () => {
    const allowed = await seedDebts(6, { consent: true });
    const refused = await seedDebts(6, { consent: false });
    const fixtures = allowed.flatMap((a, i) => [a, refused[i]!]);
    const decisions = await Promise.all(fixtures.map((f) => evaluate(app.deps, tenant.tenantId, [voice(f)], { actor, now: NOW })));

    const ids = decisions.map(([d]) => d!.decisionId!);
    expect(new Set(ids).size).toBe(fixtures.length);
    const entries = await auditEntries(ids);
    fixtures.forEach((f, i) => {
      const d = decisions[i]![0]!;
      expect(d.allowed).toBe(allowed.includes(f));
      expect(d.gate).toBe(allowed.includes(f) ? null : 'tcpa_no_consent');
      const entry = entries.get(d.decisionId!)!;
      expect(entry.subject_id).toBe(f.debtId);
      expect(entry.payload).toMatchObject({ decision_id: d.decisionId, phone: f.phone, allowed: d.allowed, gate: d.gate });
    });
    // The first two callers found fewer than two of the tenant's transactions in flight and went
    // alone at once; the ten who arrived meanwhile shared the next transaction.
    const transactions = [...entries.values()].map((e) => e.xmin);
    expect(new Set(transactions).size).toBe(3);
    expect(Math.max(...[...new Set(transactions)].map((x) => transactions.filter((t) => t === x).length))).toBe(10);
    const refusalRows = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.complianceRefusal.findMany({ where: { debtId: { in: refused.map((f) => f.debtId) } } }),
    );
    expect(refusalRows).toHaveLength(refused.length);
    for (const row of refusalRows) {
      const i = fixtures.findIndex((f) => f.debtId === row.debtId);
      expect(row.lastDecisionId).toBe(decisions[i]![0]!.decisionId);
    }
  });

  it('costs two messages per transaction: the facts travel with BEGIN, the evidence with COMMIT', async () => {
    const { db, messages } = recordedDatabase();
    try {
      const fixtures = await seedDebts(6, { consent: true });
      await evaluate({ db, logger: app.deps.logger }, tenant.tenantId, [voice(fixtures[0]!)], { actor, now: NOW }); // prepares the statements on the connection
      messages.length = 0;
      const [lone] = await evaluate({ db, logger: app.deps.logger }, tenant.tenantId, [voice(fixtures[1]!)], { actor, now: NOW });
      expect(lone!.decisionId).toBeTruthy();
      expect(messages).toHaveLength(2);
      expect(messages[0]).toMatch(/^BEGIN;[\s\S]*EXECUTE compliance_facts_tx_v1\(/);
      expect(messages[0]).not.toContain('PREPARE');
      expect(messages[1]).toMatch(/^EXECUTE compliance_evidence_tx_v1\([\s\S]*;\nCOMMIT$/);

      messages.length = 0;
      // Four callers at once: two transactions start at once, the other two callers share a third.
      const burst = await Promise.all(fixtures.slice(2).map((f) => evaluate({ db, logger: app.deps.logger }, tenant.tenantId, [voice(f)], { actor, now: NOW })));
      expect(burst.every(([d]) => d!.allowed && d!.decisionId)).toBe(true);
      expect(messages).toHaveLength(6);

      // Every execution ran the cached generic plan: none was planned for its own parameters.
      const client = await db.pool.connect();
      try {
        const { rows } = await client.query<{ name: string; generic_plans: string; custom_plans: string }>(
          "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'compliance_%_tx_v1' ORDER BY name",
        );
        expect(rows.map((r) => ({ name: r.name, custom: Number(r.custom_plans), generic: Number(r.generic_plans) }))).toEqual([
          { name: 'compliance_evidence_tx_v1', custom: 0, generic: 5 },
          { name: 'compliance_facts_tx_v1', custom: 0, generic: 5 },
        ]);
      } finally {
        client.release();
      }
    } finally {
      await db.close();
    }
  });

  it('refuses only the caller whose evidence cannot be written, without a decision id, and records the others', async () => {
    const fixtures = await seedDebts(4, { consent: false });
    // A refusal row must reference its campaign: an unknown campaign id makes this caller's evidence write fail.
    const poisoned = voice(fixtures[1]!, { campaignId: randomUUID() });
    const results = await Promise.all([
      evaluate(app.deps, tenant.tenantId, [voice(fixtures[0]!)], { actor, now: NOW }),
      evaluate(app.deps, tenant.tenantId, [poisoned], { actor, now: NOW }),
      evaluate(app.deps, tenant.tenantId, [voice(fixtures[2]!), voice(fixtures[3]!)], { actor, now: NOW }),
    ]);
    const [first, bad, pair] = results;
    expect(bad[0]).toMatchObject({ allowed: false, gate: 'tenant_policy', decisionId: null });
    expect(bad[0]!.reason).toContain('could not decide');
    expect(await auditCountFor([fixtures[1]!.debtId])).toBe(0);
    for (const d of [first[0]!, ...pair]) {
      expect(d).toMatchObject({ allowed: false, gate: 'tcpa_no_consent' });
      expect(d.decisionId).toBeTruthy();
    }
    expect(await auditCountFor([fixtures[0]!.debtId, fixtures[2]!.debtId, fixtures[3]!.debtId])).toBe(3);
  });

  it('refuses every request of a call one of whose requests fails, and no other call', async () => {
    const fixtures = await seedDebts(3, { consent: true });
    const results = await Promise.all([
      evaluate(app.deps, tenant.tenantId, [voice(fixtures[0]!)], { actor, now: NOW }),
      evaluate(app.deps, tenant.tenantId, [voice(fixtures[1]!), voice({ debtId: 'not-a-uuid', phone: '+13035550100' })], { actor, now: NOW }),
      evaluate(app.deps, tenant.tenantId, [voice(fixtures[2]!)], { actor, now: NOW }),
    ]);
    expect(results[1]).toHaveLength(2);
    for (const d of results[1]) expect(d).toMatchObject({ allowed: false, decisionId: null });
    expect(await auditCountFor([fixtures[1]!.debtId])).toBe(0);
    for (const r of [results[0], results[2]]) expect(r[0]).toMatchObject({ allowed: true, gate: null });
  });

  it('records nothing for the dry runs that share a transaction with recorded decisions', async () => {
    const fixtures = await seedDebts(4, { consent: false });
    const results = await Promise.all(
      fixtures.map((f, i) => evaluate(app.deps, tenant.tenantId, [voice(f)], { actor, now: NOW, dryRun: i % 2 === 1 })),
    );
    results.forEach(([d], i) => {
      expect(d!.gate).toBe('tcpa_no_consent');
      if (i % 2 === 1) expect(d!.decisionId).toBeNull();
      else expect(d!.decisionId).toBeTruthy();
    });
    expect(await auditCountFor([fixtures[1]!.debtId, fixtures[3]!.debtId])).toBe(0);
    expect(await auditCountFor([fixtures[0]!.debtId, fixtures[2]!.debtId])).toBe(2);
    const refusals = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.complianceRefusal.count({ where: { debtId: { in: [fixtures[1]!.debtId, fixtures[3]!.debtId] } } }),
    );
    expect(refusals).toBe(0);
  });

  it('refuses every concurrent caller, with no decision id, when the database is unreachable', async () => {
    const fixtures = await seedDebts(3, { consent: true });
    const broken = createDatabase(app.config.appDatabaseUrl.replace(/\/[^/]+$/, '/no_such_database'), 2);
    try {
      const results = await Promise.all(fixtures.map((f) => evaluate({ db: broken, logger: app.deps.logger }, tenant.tenantId, [voice(f)], { actor, now: NOW })));
      for (const [d] of results) {
        expect(d).toMatchObject({ allowed: false, gate: 'tenant_policy', decisionId: null });
        expect(d!.reason).toContain('could not decide');
      }
    } finally {
      await broken.close();
    }
  });

  it('refuses, with no decision id, when the connection dies between the facts and the evidence', async () => {
    const { db, messages } = recordedDatabase();
    const [fixture] = await seedDebts(1, { consent: true });
    try {
      db.pool.on('acquire', (client: PoolClient) => {
        const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
        (client as unknown as { query: (...args: unknown[]) => unknown }).query = async (...args: unknown[]) => {
          const q = args[0];
          if (typeof q === 'string' && q.startsWith('EXECUTE compliance_evidence_tx_v1')) {
            // The backend goes away while the transaction is open, as in a failover.
            const killer = new Client({ connectionString: app.config.ownerDatabaseUrl });
            await killer.connect();
            await killer.query('SELECT pg_terminate_backend($1, 5000)', [(client as unknown as { processID: number }).processID]);
            await killer.end();
          }
          return query(...args);
        };
      });
      const [d] = await evaluate({ db, logger: app.deps.logger }, tenant.tenantId, [voice(fixture!)], { actor, now: NOW });
      expect(d).toMatchObject({ allowed: false, gate: 'tenant_policy', decisionId: null });
      expect(messages.some((m) => m.startsWith('EXECUTE compliance_evidence_tx_v1'))).toBe(true);
      expect(await auditCountFor([fixture!.debtId])).toBe(0);
    } finally {
      await db.close();
    }
  });
});
