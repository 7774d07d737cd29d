import { Client } from 'pg';
import { withTenantSql, type SqlTx } from '../../src/lib/tenancy';
import { listCdrRows } from '../../src/modules/cdr/cdr.repository';
import { listCallAttemptRows, listDebtRows } from '../../src/modules/debts/debt.repository';
import { listRecordingRows } from '../../src/modules/recordings/recording.repository';
import { countAnsweredCalls, pressBreakdown } from '../../src/modules/survey/survey.repository';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(60_000);

/**
 * The listings' statements as the API runs them (the application role, under row-level security),
 * planned over a tenant with a history large enough that the planner prefers an index wherever one
 * can serve, and with joins held to nested loops: at 20,000 rows a hash join of the page against a
 * whole table can be the cheaper plan (at a million it is not), and the shared test database's
 * statistics decide which. A Seq Scan of a history table left in such a plan is an access no index
 * can serve under the tenant policy (a qual the planner may not push beneath it), which at a
 * million rows is a scan of the table per page or, inside a per-row subquery, per row. Plans, not
 * timings: the pages' speed is measured by `npm run bench:scale`.
 */

const HISTORY_TABLES = ['call_attempts', 'recordings', 'debts', 'debt_contacts'];
const ROWS = 20_000;

let app: TestApp;
let tenant: ProvisionedTenant;
let debtId: string;

beforeAll(async () => {
  app = await startTestApp();
  tenant = await provisionTenant(app);
  debtId = await withTenantSql(app.deps.db, tenant.tenantId, async (sql) => {
    await sql.query(
      `INSERT INTO debts (tenant_id, external_ref, consumer_ref, created_at)
       SELECT $1::uuid, 'plan-' || g, 'consumer-' || g, now() - g * interval '1 minute' FROM generate_series(1, $2::int) g`,
      [tenant.tenantId, ROWS],
    );
    await sql.query(
      `INSERT INTO debt_contacts (tenant_id, debt_id, phone_e164, is_primary)
       SELECT tenant_id, id, '+1212' || lpad((2000000 + row_number() OVER (ORDER BY id))::text, 7, '0'), true FROM debts`,
      [],
    );
    await sql.query(
      `WITH a AS (
         INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, call_uuid, started_at, answered_at, ended_at,
                                    disposition, inserted_at)
         SELECT tenant_id, id, consumer_ref, external_ref, '+12125550100', 'plan-' || id, created_at, created_at + interval '5 seconds',
                created_at + interval '1 minute', 'answered_human', created_at
           FROM debts
         RETURNING id, debt_id, call_uuid, started_at
       )
       INSERT INTO recordings (tenant_id, call_attempt_id, call_uuid, debt_id, phone_number, started_at, retained_until)
       SELECT $1::uuid, id, call_uuid, debt_id, '+12125550100', started_at, current_date + 365 FROM a WHERE right(call_uuid, 1) < '8'`,
      [tenant.tenantId],
    );
    const [one] = await sql.query<{ id: string }>('SELECT id FROM debts LIMIT 1', []);
    return one!.id;
  });
  const owner = new Client({ connectionString: app.config.DATABASE_URL });
  await owner.connect();
  try {
    await owner.query(`ANALYZE ${HISTORY_TABLES.join(', ')}`);
  } finally {
    await owner.end();
  }
});
afterAll(async () => {
  await app?.close();
});

/** The plan of the one statement `list` runs, as the application role in the tenant's transaction. */
async function planOf(list: (sql: SqlTx) => Promise<unknown>, settings: string[] = []): Promise<string> {
  return withTenantSql(app.deps.db, tenant.tenantId, async (sql) => {
    const seen: { text: string; values: unknown[] }[] = [];
    await list({
      query: (text, values = []) => {
        seen.push({ text, values });
        return Promise.resolve([]);
      },
    });
    expect(seen).toHaveLength(1);
    await sql.query('SET LOCAL enable_hashjoin = off');
    await sql.query('SET LOCAL enable_mergejoin = off');
    for (const setting of settings) await sql.query(`SET LOCAL ${setting}`);
    const rows = await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${seen[0]!.text}`, seen[0]!.values);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

const cursor = { at: new Date('2026-11-01T00:00:00.000Z'), id: '00000000-0000-4000-8000-000000000000' };

describe('history listings are index probes under row-level security', () => {
  it.each([
    ['GET /v1/calls (originals), first page', (sql: SqlTx) => listCdrRows(sql, tenant.tenantId, { live: undefined }, true, null, 201)],
    ['GET /v1/calls, a later page', (sql: SqlTx) => listCdrRows(sql, tenant.tenantId, { live: undefined }, true, cursor, 201)],
    ['GET /v1/call_attempts, a later page', (sql: SqlTx) => listCdrRows(sql, tenant.tenantId, { live: undefined }, false, cursor, 201)],
    ['GET /v1/recordings, a later page', (sql: SqlTx) => listRecordingRows(sql, tenant.tenantId, {}, cursor, 201)],
    ['GET /v1/debts, a later page', (sql: SqlTx) => listDebtRows(sql, tenant.tenantId, {}, cursor, 201)],
    ['GET /v1/debts/{id}/call_attempts', (sql: SqlTx) => listCallAttemptRows(sql, tenant.tenantId, debtId, cursor, 201)],
  ])('%s', async (_name, list) => {
    const plan = await planOf(list);
    expect(plan).toContain('Index');
    expect(plan.split('\n').filter((line) => HISTORY_TABLES.some((t) => line.includes(`Seq Scan on ${t} `)))).toEqual([]);
  });
});

describe('a survey window narrows its index scans under row-level security', () => {
  // With sequential scans off the planner takes an index either way: the campaign's, or the
  // tenant's time index with the campaign as a filter, as the shared test database's statistics
  // make one or the other cheaper (CI has seen both). What the test tells apart is whether the
  // window's bounds are index conditions or a filter over every row the index yields (a bound on
  // an expression of the column, or one the planner may not push beneath the tenant policy).
  const window = { from: new Date('2026-11-01T00:00:00.000Z'), to: new Date('2026-11-02T00:00:00.000Z') };
  const campaignId = '00000000-0000-4000-8000-000000000001';
  it.each([
    ['answered calls, a window', (sql: SqlTx) => countAnsweredCalls(sql, campaignId, window.from, window.to), 'started_at'],
    ['answered calls, open bounds', (sql: SqlTx) => countAnsweredCalls(sql, campaignId, null, null), 'started_at'],
    ['key presses, a window', (sql: SqlTx) => pressBreakdown(sql, campaignId, window.from, window.to), 'pressed_at'],
    ['key presses, open bounds', (sql: SqlTx) => pressBreakdown(sql, campaignId, null, null), 'pressed_at'],
  ])('%s', async (_name, list, column) => {
    const plan = await planOf(list, ['enable_seqscan = off']);
    const conditions = plan.split('\n').filter((line) => line.includes('Index Cond:'));
    expect(conditions.some((line) => line.includes(`${column} >=`) && line.includes(`${column} <`))).toBe(true);
  });
});
