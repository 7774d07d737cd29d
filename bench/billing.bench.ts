import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { loadConfig } from '../src/config';
import { createLogger } from '../src/lib/logger';
import { withTenantSql } from '../src/lib/tenancy';
import { enforceBillingForAll } from '../src/modules/billing/billing-enforcement.service';
import { billingRefusal, evaluateBilling } from '../src/modules/billing/billing.service';
import { createDeps } from '../src/runtime';
import { argNumber, freshDatabase, machineLine, percentile } from './support';

/**
 * `npm run bench:billing`: the billing hot paths on a fresh database.
 * Seeds `tenants` tenants with billing on (prepaid, postpaid and subscription in turn, a cap, cash),
 * each with `attempts` call attempts over the last 120 days (40 % answered, one in ten corrected),
 * SMS ledger rows and AI usage; one more tenant holds `big` call attempts. Then measures
 * (a) billingRefusal, the check every dial tick, manual dial and SMS send makes, in its own tenant
 * transaction; (b) evaluateBilling of one ordinary tenant and of the big one; (c) the periodic
 * enforcement pass over every tenant (enforceBillingForAll).
 * Flags: --tenants=200 --attempts=5000 --big=500000 --refusals=5000 --runs=3
 */
const DATABASE_URL = process.env.BILLING_BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/dialer_bench_billing';
const SCHEMES = ['prepaid', 'postpaid', 'subscription'] as const;

async function seed(owner: Client, tenantId: string, index: number, attempts: number): Promise<void> {
  await owner.query('INSERT INTO tenants (id, account_id, name) VALUES ($1, $2, $3)', [tenantId, randomUUID(), `bench-billing-${index}`]);
  await owner.query(
    `INSERT INTO billing_accounts (tenant_id, scheme, enforcement_mode, cap_usd, credit_limit_usd, created_at)
     VALUES ($1, $2, $3, 1000000, 0, now() - interval '200 days')`,
    [tenantId, SCHEMES[index % SCHEMES.length], index % 2 === 0 ? 'hard_block' : 'graduated'],
  );
  await owner.query(`INSERT INTO billing_ledger (tenant_id, kind, amount_usd) VALUES ($1, 'cash', 500000), ($1, 'grant', 100)`, [tenantId]);
  const [debt] = (
    await owner.query<{ id: string }>(
      `INSERT INTO debts (tenant_id, external_ref, consumer_ref, amount_cents, debt_type, account_number)
       VALUES ($1, 'bench-debt', 'bench-consumer', 10000, 'other', 'acct-1') RETURNING id`,
      [tenantId],
    )
  ).rows;
  await owner.query(
    `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, started_at, answered_at, ended_at, disposition, inserted_at)
     SELECT $1, $2, 'bench-consumer', 'bench-debt', '+13035550100', s, CASE WHEN g % 5 < 2 THEN s + interval '8 seconds' END,
            s + interval '8 seconds' + (g % 300) * interval '1 second', CASE WHEN g % 5 < 2 THEN 'answered_human' ELSE 'no_answer' END, s
       FROM generate_series(1, $3::int) g, LATERAL (SELECT now() - (g::float / $3) * interval '120 days' AS s) t`,
    [tenantId, debt!.id, attempts],
  );
  await owner.query(
    `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, started_at, answered_at, ended_at, disposition, corrects_id, inserted_at)
     SELECT tenant_id, debt_id, consumer_ref, debt_key, to_number, started_at, answered_at, ended_at + interval '30 seconds', 'promise_to_pay', id, inserted_at + interval '1 minute'
       FROM call_attempts WHERE tenant_id = $1 AND answered_at IS NOT NULL AND (extract(epoch FROM started_at)::bigint % 10) = 0`,
    [tenantId],
  );
  await owner.query(
    `INSERT INTO sms_messages (tenant_id, direction, status, from_e164, to_e164, body, segments, encoding, cost_usd, occurred_at)
     SELECT $1, 'outbound', 'queued', '+13035550199', '+13035550100', 'bench', 1, 'gsm7', 0.0079, now() - (g::float / $2) * interval '120 days'
       FROM generate_series(1, $2::int) g`,
    [tenantId, Math.max(1, Math.floor(attempts / 4))],
  );
  await owner.query(
    `INSERT INTO ai_usage (tenant_id, call_uuid, answered_at, ended_at, billable_seconds, minute_rate_usd, cost_usd)
     SELECT $1, 'bench-' || g, s, s + interval '90 seconds', 90, 0.12, 0.18
       FROM generate_series(1, $2::int) g, LATERAL (SELECT now() - (g::float / $2) * interval '120 days' AS s) t`,
    [tenantId, Math.max(1, Math.floor(attempts / 10))],
  );
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = process.hrtime.bigint();
  const result = await run();
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, result };
}

const ms = (v: number) => `${v.toFixed(v < 10 ? 2 : 0)} ms`;

async function main(): Promise<void> {
  const tenants = argNumber('tenants', 200);
  const attempts = argNumber('attempts', 5000);
  const big = argNumber('big', 500_000);
  const refusals = argNumber('refusals', 5000);
  const runs = argNumber('runs', 3);
  await freshDatabase(DATABASE_URL);
  const owner = new Client({ connectionString: DATABASE_URL });
  await owner.connect();
  const ids = Array.from({ length: tenants }, () => randomUUID());
  const bigId = randomUUID();
  const seeding = await timed(async () => {
    for (const [i, id] of ids.entries()) await seed(owner, id, i, attempts);
    await seed(owner, bigId, tenants, big);
    await owner.query('ANALYZE call_attempts, sms_messages, ai_usage, billing_ledger, billing_accounts');
  });
  await owner.end();
  process.stdout.write(
    `seeded ${tenants} tenants × ${attempts} call attempts and one of ${big} (each with corrections, SMS and AI usage) in ${(seeding.ms / 1000).toFixed(1)} s\n`,
  );

  const config = loadConfig({ ...process.env, DATABASE_URL, LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: 'bench' });
  const deps = await createDeps(config, createLogger('warn'), null);
  try {
    const refusalMs: number[] = [];
    for (let i = 0; i < refusals; i++) {
      const tenantId = ids[i % ids.length]!;
      refusalMs.push((await timed(() => withTenantSql(deps.db, tenantId, (sql) => billingRefusal(sql)))).ms);
    }
    refusalMs.sort((a, b) => a - b);

    const ordinary: number[] = [];
    const large: number[] = [];
    const passes: number[] = [];
    for (let r = 0; r < runs; r++) {
      ordinary.push((await timed(() => evaluateBilling(deps, ids[r % ids.length]!))).ms);
      large.push((await timed(() => evaluateBilling(deps, bigId))).ms);
      const pass = await timed(() => enforceBillingForAll(deps));
      if (pass.result.failed !== 0 || pass.result.tenants !== tenants + 1) throw new Error(`pass evaluated ${pass.result.tenants}, ${pass.result.failed} failed`);
      passes.push(pass.ms);
    }
    const range = (v: number[]) => `${ms(Math.min(...v))} - ${ms(Math.max(...v))}`;
    const out = [
      `billingRefusal (own tenant transaction), ${refusals} calls: p50 ${ms(percentile(refusalMs, 50))}, p99 ${ms(percentile(refusalMs, 99))}, max ${ms(refusalMs.at(-1)!)}`,
      `evaluateBilling, tenant of ${attempts} attempts, ${runs} runs: ${range(ordinary)}`,
      `evaluateBilling, tenant of ${big} attempts, ${runs} runs: ${range(large)}`,
      `enforcement pass over ${tenants + 1} tenants, ${runs} runs: ${range(passes)} (${ms(Math.min(...passes) / (tenants + 1))} a tenant)`,
      `machine: ${machineLine()}`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await deps.db.close();
    await deps.objectStore.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
