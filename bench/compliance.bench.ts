import { randomUUID } from 'node:crypto';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/lib/logger';
import { withTenantSql } from '../src/lib/tenancy';
import { evaluate } from '../src/modules/compliance/compliance.service';
import type { DecisionRequest } from '../src/modules/compliance/compliance.types';
import { createDeps } from '../src/runtime';
import { argNumber, BENCH_DATABASE_URL, machineLine, percentile } from './support';
import { prepareDatabase } from '../src/db/migrate';

/**
 * `npm run bench:compliance`: gate decisions with 100,000 debts loaded. Each decision is the real
 * path: one facts query, the pure chain, and the evidence write (an audit-chain link per decision,
 * a refusal row for refusals). Phase 1 paces decisions at a fixed rate (open loop, default 500/s)
 * and reports latency; phase 2 runs closed loop with N concurrent callers for peak throughput.
 * Flags: --debts=100000 --rate=500 --seconds=20 --concurrency=16
 */
const TENANT_NAME = 'bench-compliance';
const AREA_CODES = ['303', '617', '212', '206', '305', '208', '312', '415', '512', '907'];


async function ensureTenant(deps: Awaited<ReturnType<typeof createDeps>>, debts: number): Promise<{ tenantId: string; leads: { debtId: string; phone: string }[] }> {
  const owner = new (await import('pg')).Client({ connectionString: BENCH_DATABASE_URL });
  await owner.connect();
  let tenantId: string;
  try {
    const found = await owner.query<{ id: string }>('SELECT id FROM tenants WHERE name = $1', [TENANT_NAME]);
    tenantId = found.rows[0]?.id ?? randomUUID();
    if (!found.rows[0]) await owner.query('INSERT INTO tenants (id, account_id, name) VALUES ($1, $2, $3)', [tenantId, randomUUID(), TENANT_NAME]);
  } finally {
    await owner.end();
  }
  const have = await withTenantSql(deps.db, tenantId, (sql) => sql.query<{ n: string }>('SELECT count(*) AS n FROM debts'));
  if (Number(have[0]!.n) === 0) {
    const started = Date.now();
    // Set-based seed: debts with a primary contact and consent, three weeks of call history, some
    // do-not-call listings and reassigned numbers, spread over multi-state area codes.
    await withTenantSql(deps.db, tenantId, async (sql) => {
      await sql.query(
        `INSERT INTO debts (tenant_id, external_ref, consumer_ref, amount_cents, debt_type, account_number)
         SELECT app_tenant_id(), 'bench-' || g, 'consumer-' || (g / 2), 10000 + g, CASE WHEN g % 20 = 0 THEN 'student_loan' ELSE 'other' END, 'acct-' || (g / 4)
           FROM generate_series(1, $1::int) g`,
        [debts],
      );
      await sql.query(
        `INSERT INTO debt_contacts (tenant_id, debt_id, phone_e164, is_primary, line_type)
         SELECT app_tenant_id(), d.id, '+1' || ($1::text[])[1 + (substr(d.external_ref, 7)::int % $2)] || '555' || lpad((substr(d.external_ref, 7)::int % 10000)::text, 4, '0'), true, 'mobile'
           FROM debts d`,
        [AREA_CODES, AREA_CODES.length],
      );
      await sql.query(
        `INSERT INTO consents (tenant_id, debt_id, phone_e164, channel, source, granted_at)
         SELECT app_tenant_id(), c.debt_id, c.phone_e164, 'voice', 'import', now() - interval '90 days' FROM debt_contacts c`,
      );
      await sql.query(
        `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, started_at, disposition)
         SELECT app_tenant_id(), d.id, d.consumer_ref, d.external_ref, c.phone_e164, now() - (k * interval '5 days') - (random() * interval '4 days'), 'no_answer'
           FROM debts d JOIN debt_contacts c ON c.debt_id = d.id, generate_series(0, 2) k`,
      );
      await sql.query(
        `INSERT INTO dnc_entries (tenant_id, phone_e164, source) SELECT app_tenant_id(), c.phone_e164, 'suppression_import'
           FROM debt_contacts c JOIN debts d ON d.id = c.debt_id WHERE substr(d.external_ref, 7)::int % 50 = 0 ON CONFLICT DO NOTHING`,
      );
    });
    // Statistics as autovacuum would gather them; only the owner may analyze.
    const analyzer = new (await import('pg')).Client({ connectionString: BENCH_DATABASE_URL });
    await analyzer.connect();
    await analyzer.query('ANALYZE debts, debt_contacts, consents, call_attempts, dnc_entries, audit_log');
    await analyzer.end();
    process.stdout.write(`seeded ${debts} debts in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } else if (Number(have[0]!.n) !== debts) {
    throw new Error(`the bench tenant holds ${have[0]!.n} debts, not ${debts}: drop the dialer_bench database to reseed`);
  }
  const leads = await withTenantSql(deps.db, tenantId, (sql) =>
    sql.query<{ debt_id: string; phone: string }>('SELECT c.debt_id, c.phone_e164 AS phone FROM debt_contacts c WHERE c.is_primary LIMIT $1', [debts]),
  );
  return { tenantId, leads: leads.map((l) => ({ debtId: l.debt_id, phone: l.phone })) };
}

async function main(): Promise<void> {
  const debts = argNumber('debts', 100_000);
  const rate = argNumber('rate', 500);
  const seconds = argNumber('seconds', 20);
  const concurrency = argNumber('concurrency', 16);
  await prepareDatabase(BENCH_DATABASE_URL);
  const config = loadConfig({ ...process.env, DATABASE_URL: BENCH_DATABASE_URL, LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: 'bench' });
  const deps = await createDeps(config, createLogger('warn'), null);
  try {
    const { tenantId, leads } = await ensureTenant(deps, debts);
    const now = new Date(); // Real time: night hours refuse on quiet_hours, which is still a full decision.
    const actor = { type: 'system', id: null };
    const pick = (): DecisionRequest => {
      const lead = leads[Math.floor(Math.random() * leads.length)]!;
      return { debtId: lead.debtId, phone: lead.phone, channel: 'voice', campaignId: null, initiation: 'automated', artificialVoice: false };
    };
    const once = async (latencies: number[], outcomes: Map<string, number>) => {
      const started = process.hrtime.bigint();
      const [d] = await evaluate(deps, tenantId, [pick()], { actor, now });
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      const key = d!.decisionId === null ? 'engine_error' : (d!.gate ?? 'allowed');
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    };
    for (let i = 0; i < 200; i += 1) await once([], new Map()); // warm-up

    // Phase 1: open loop at a fixed rate.
    const paced: number[] = [];
    const pacedOutcomes = new Map<string, number>();
    const total = rate * seconds;
    const interval = 1000 / rate;
    const start = performance.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < total; i += 1) {
      const due = start + i * interval;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      inflight.push(once(paced, pacedOutcomes));
    }
    await Promise.all(inflight);
    const pacedSeconds = (performance.now() - start) / 1000;

    // Phase 2: closed loop, peak throughput.
    const peak: number[] = [];
    const peakOutcomes = new Map<string, number>();
    const peakStart = performance.now();
    const deadline = peakStart + seconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < deadline) await once(peak, peakOutcomes);
      }),
    );
    const peakSeconds = (performance.now() - peakStart) / 1000;

    paced.sort((a, b) => a - b);
    peak.sort((a, b) => a - b);
    const summary = {
      machine: machineLine(),
      debts_loaded: leads.length,
      evaluated_at: now.toISOString(),
      paced: {
        target_per_s: rate,
        achieved_per_s: Math.round(paced.length / pacedSeconds),
        decisions: paced.length,
        latency_ms: { p50: +percentile(paced, 50).toFixed(2), p90: +percentile(paced, 90).toFixed(2), p99: +percentile(paced, 99).toFixed(2), max: +paced[paced.length - 1]!.toFixed(2) },
        outcomes: Object.fromEntries(pacedOutcomes),
      },
      peak: {
        concurrency,
        decisions_per_s: Math.round(peak.length / peakSeconds),
        latency_ms: { p50: +percentile(peak, 50).toFixed(2), p99: +percentile(peak, 99).toFixed(2) },
        outcomes: Object.fromEntries(peakOutcomes),
      },
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    if ((pacedOutcomes.get('engine_error') ?? 0) > 0) process.exitCode = 1;
  } finally {
    await deps.db.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
