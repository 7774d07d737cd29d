import { createHash, randomUUID } from 'node:crypto';
import os from 'node:os';
import { Client } from 'pg';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/lib/logger';
import { evaluate } from '../src/modules/compliance/compliance.service';
import type { DecisionRequest } from '../src/modules/compliance/compliance.types';
import { createDeps } from '../src/runtime';
import { argNumber, BENCH_DATABASE_URL, machineLine, percentile } from './support';
import { prepareDatabase } from '../src/db/migrate';

/**
 * `npm run bench:compliance`: gate decisions with N debts loaded (default 100,000; 1,000,000 seeds in
 * a minute or two). Each decision is the real path of a standalone decision (`evaluate`): the
 * facts query, the pure chain, and the evidence write (an audit-chain link per decision, a refusal
 * row for refusals), committed before it answers; concurrent decisions of the tenant share
 * transactions (group commit). Phase 1 paces single decisions at a fixed rate (open loop, default
 * 500/s) and reports latency; phase 2 runs closed loop with N concurrent callers for peak throughput.
 * Flags: --debts=100000 --rate=500 --seconds=20 --concurrency=16
 */
const TENANT_NAME = 'bench-compliance-v2';
const AREA_CODES = ['303', '617', '212', '206', '305', '208', '312', '415', '512', '907'];

/** Debt g's id and primary number, computed the same way here and in the seed's SQL. */
function debtId(tenantId: string, g: number): string {
  const h = createHash('md5').update(`${tenantId}:${g}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
function phoneOf(g: number): string {
  return `+1${AREA_CODES[g % AREA_CODES.length]}${String(2_000_000 + (g % 8_000_000)).padStart(7, '0')}`;
}
const DEBT_ID_SQL = `md5($1::uuid::text || ':' || g)::uuid`;
const PHONE_SQL = `'+1' || (ARRAY[${AREA_CODES.map((a) => `'${a}'`).join(', ')}])[1 + g % ${AREA_CODES.length}] || (2000000 + g % 8000000)::text`;

/**
 * Set-based seed over generate_series, as the owner: the debts first, then in parallel their
 * contacts, consents, three weeks of calls (three per debt), reported prior attempts (one debt in
 * ten) and do-not-call listings (one number in fifty), one statement a table (three for the calls).
 * Every id is derived from the debt's number, so no statement joins the debts it depends on, and
 * foreign-key triggers are skipped (session_replication_role) because the generated rows are
 * consistent by construction. Statistics are gathered as autovacuum would.
 */
async function seed(tenantId: string, debts: number): Promise<string> {
  const timings: string[] = [];
  const run = async (label: string, text: string, values: unknown[]) => {
    const started = Date.now();
    const c = new Client({ connectionString: BENCH_DATABASE_URL });
    await c.connect();
    try {
      await c.query('BEGIN');
      await c.query('SET LOCAL session_replication_role = replica').catch(async () => {
        // Not a superuser: keep the triggers (slower, same rows).
        await c.query('ROLLBACK');
        await c.query('BEGIN');
      });
      await c.query(text, values);
      await c.query('COMMIT');
    } finally {
      await c.end();
    }
    timings.push(`${label} ${((Date.now() - started) / 1000).toFixed(0)} s`);
  };
  const args = [tenantId, debts];
  await run(
    'debts',
    `INSERT INTO debts (id, tenant_id, external_ref, consumer_ref, amount_cents, debt_type, account_number)
     SELECT ${DEBT_ID_SQL}, $1::uuid, 'bench-' || g, 'consumer-' || (g / 2), 10000 + g,
            CASE WHEN g % 20 = 0 THEN 'student_loan' ELSE 'other' END, 'acct-' || (g / 4)
       FROM generate_series(1, $2::int) g`,
    args,
  );
  await Promise.all([
    run(
      'contacts',
      `INSERT INTO debt_contacts (tenant_id, debt_id, phone_e164, is_primary, line_type)
       SELECT $1::uuid, ${DEBT_ID_SQL}, ${PHONE_SQL}, true, 'mobile' FROM generate_series(1, $2::int) g`,
      args,
    ),
    run(
      'consents',
      `INSERT INTO consents (tenant_id, debt_id, phone_e164, channel, source, granted_at)
       SELECT $1::uuid, ${DEBT_ID_SQL}, ${PHONE_SQL}, 'voice', 'import', now() - interval '90 days' FROM generate_series(1, $2::int) g`,
      args,
    ),
    // Three weeks of calls, one statement per week so the widest table loads on both cores.
    ...[0, 1, 2].map((k) =>
      run(
        `calls ${k + 1}/3`,
        `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, started_at, disposition)
         SELECT $1::uuid, ${DEBT_ID_SQL}, 'consumer-' || (g / 2), 'bench-' || g, ${PHONE_SQL},
                now() - (${k} * interval '5 days') - (random() * interval '4 days'), 'no_answer'
           FROM generate_series(1, $2::int) g`,
        args,
      ),
    ),
    run(
      'prior attempts',
      `INSERT INTO debt_prior_attempts (tenant_id, debt_id, attempts, reported_at)
       SELECT $1::uuid, ${DEBT_ID_SQL}, 1 + g % 3, now() - (random() * interval '20 days')
         FROM generate_series(1, $2::int) g WHERE g % 10 = 0`,
      args,
    ),
    run(
      'do-not-call',
      `INSERT INTO dnc_entries (tenant_id, phone_e164, source)
       SELECT $1::uuid, ${PHONE_SQL}, 'suppression_import' FROM generate_series(1, $2::int) g WHERE g % 50 = 0`,
      args,
    ),
  ]);
  const owner = new Client({ connectionString: BENCH_DATABASE_URL });
  await owner.connect();
  try {
    const started = Date.now();
    await owner.query('ANALYZE debts, debt_contacts, consents, call_attempts, debt_prior_attempts, dnc_entries, audit_log');
    timings.push(`analyze ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await owner.end();
  }
  return timings.join(', ');
}

async function ensureTenant(debts: number): Promise<string> {
  const owner = new Client({ connectionString: BENCH_DATABASE_URL });
  await owner.connect();
  try {
    const found = await owner.query<{ id: string; n: string }>('SELECT t.id, (SELECT count(*) FROM debts d WHERE d.tenant_id = t.id) AS n FROM tenants t WHERE t.name = $1', [TENANT_NAME]);
    if (found.rows[0]) {
      if (Number(found.rows[0].n) !== debts) {
        throw new Error(`the bench tenant holds ${found.rows[0].n} debts, not ${debts}: drop the bench database (${BENCH_DATABASE_URL}) to reseed`);
      }
      return found.rows[0].id;
    }
    const tenantId = randomUUID();
    await owner.query('INSERT INTO tenants (id, account_id, name) VALUES ($1, $2, $3)', [tenantId, randomUUID(), TENANT_NAME]);
    const started = Date.now();
    const timings = await seed(tenantId, debts);
    process.stdout.write(`seeded ${debts} debts in ${((Date.now() - started) / 1000).toFixed(1)} s (${timings})\n`);
    return tenantId;
  } finally {
    await owner.end();
  }
}

function latency(sorted: number[]) {
  const ms = (v: number) => +v.toFixed(2);
  return { p50: ms(percentile(sorted, 50)), p90: ms(percentile(sorted, 90)), p99: ms(percentile(sorted, 99)), max: ms(sorted[sorted.length - 1]!) };
}

async function main(): Promise<void> {
  const debts = argNumber('debts', 100_000);
  const rate = argNumber('rate', 500);
  const seconds = argNumber('seconds', 20);
  const concurrency = argNumber('concurrency', 16);
  await prepareDatabase(BENCH_DATABASE_URL);
  const tenantId = await ensureTenant(debts);
  const config = loadConfig({ ...process.env, DATABASE_URL: BENCH_DATABASE_URL, LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: 'bench' });
  const deps = await createDeps(config, createLogger('warn'), null);
  try {
    const now = new Date(); // Real time: night hours refuse on quiet_hours, which is still a full decision.
    const actor = { type: 'system', id: null };
    const pick = (): DecisionRequest => {
      const g = 1 + Math.floor(Math.random() * debts);
      return { debtId: debtId(tenantId, g), phone: phoneOf(g), channel: 'voice', campaignId: null, initiation: 'automated', artificialVoice: false };
    };
    const once = async (latencies: number[], outcomes: Map<string, number>) => {
      const started = process.hrtime.bigint();
      const [d] = await evaluate(deps, tenantId, [pick()], { actor, now });
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      const key = d!.decisionId === null ? 'engine_error' : (d!.gate ?? 'allowed');
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    };
    for (let i = 0; i < 500; i += 1) await once([], new Map()); // warm-up: every pooled connection prepares its statements

    // Phase 1: open loop at a fixed rate.
    const paced: number[] = [];
    const pacedOutcomes = new Map<string, number>();
    const total = rate * seconds;
    const interval = 1000 / rate;
    const load = os.loadavg()[0]!;
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
      load_average_1m_at_start: +load.toFixed(2),
      debts_loaded: debts,
      pool: config.DB_POOL_MAX,
      evaluated_at: now.toISOString(),
      paced: {
        target_per_s: rate,
        achieved_per_s: Math.round(paced.length / pacedSeconds),
        decisions: paced.length,
        latency_ms: latency(paced),
        outcomes: Object.fromEntries(pacedOutcomes),
      },
      peak: {
        concurrency,
        decisions_per_s: Math.round(peak.length / peakSeconds),
        latency_ms: latency(peak),
        outcomes: Object.fromEntries(peakOutcomes),
      },
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    if ((pacedOutcomes.get('engine_error') ?? 0) > 0 || (peakOutcomes.get('engine_error') ?? 0) > 0) process.exitCode = 1;
  } finally {
    await deps.db.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
