import { Client } from 'pg';
import { provisionTenant, startTestApp, uniqueName, type HttpResult, type TestApp } from '../helpers/harness';
import { privateDatabase, type PrivateDatabase } from '../helpers/private-database';

/** What the planner currently believes about the debts table (readable by any role). */
async function knownDebtRows(app: TestApp): Promise<number> {
  const { rows } = await app.deps.db.pool.query<{ reltuples: number }>(`SELECT reltuples FROM pg_class WHERE oid = 'public.debts'::regclass`);
  return Number(rows[0]!.reltuples);
}

/**
 * The tenants the planner's statistics know by name (the debts' most common tenant ids), read as the
 * owner: pg_stats hides a table's statistics from a role its row-level security applies to.
 */
async function tenantsInStatistics(ownerUrl: string): Promise<string[]> {
  const owner = new Client({ connectionString: ownerUrl });
  await owner.connect();
  try {
    const { rows } = await owner.query<{ vals: string[] | null }>(
      `SELECT most_common_vals::text::uuid[] AS vals FROM pg_stats WHERE schemaname = 'public' AND tablename = 'debts' AND attname = 'tenant_id'`,
    );
    return rows[0]?.vals ?? [];
  } finally {
    await owner.end();
  }
}

async function importDebts(app: TestApp, apiKey: string, n: number): Promise<void> {
  const res = await app.request('POST', '/v1/debts/import', { token: apiKey, body: { debts: debtsOf(n) } });
  expect(res.status).toBe(200);
  expect(res.body.imported).toBe(n);
}

let phoneSeq = 0;
const debtsOf = (n: number) =>
  Array.from({ length: n }, () => ({
    external_ref: uniqueName('ext'),
    consumer_ref: uniqueName('c'),
    amount_cents: 1000,
    contacts: [{ phone_e164: `+1212556${String(phoneSeq++ % 10000).padStart(4, '0')}` }],
  }));

describe('debt pages after bulk imports', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('an import that grows the tables by a tenth refreshes the planner statistics, so pages plan on real counts', async () => {
    const tenant = await provisionTenant(app);
    const before = await knownDebtRows(app);
    const n = Math.max(50, Math.ceil(Math.max(before, 0) * 0.1) + 10);
    const res = await app.request('POST', '/v1/debts/import', { token: tenant.apiKey, body: { debts: debtsOf(n) } });
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(n);
    expect(await knownDebtRows(app)).toBeGreaterThanOrEqual(Math.max(before, 0) + n);
  });

  it('pages a tenant in creation order across the cursor, every debt once with its primary contact', async () => {
    const tenant = await provisionTenant(app);
    const imported = debtsOf(7);
    expect((await app.request('POST', '/v1/debts/import', { token: tenant.apiKey, body: { debts: imported } })).status).toBe(200);
    const seen: { external_ref: string; primary_phone: string | null; contact_count: number }[] = [];
    let cursor: string | null = null;
    do {
      const page: HttpResult = await app.request('GET', `/v1/debts?limit=3${cursor ? `&cursor=${cursor}` : ''}`, {
        token: tenant.apiKey,
      });
      expect(page.status).toBe(200);
      expect(page.body.debts.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.debts);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen.map((d) => d.external_ref).sort()).toEqual(imported.map((d) => d.external_ref).sort());
    for (const d of seen) expect(d.contact_count).toBe(1);
  });
});

// Its own database: the statistics are the table's, and other files' imports would move them.
describe('planner statistics across many imports', () => {
  let database: PrivateDatabase;
  let app: TestApp;
  let apiKey: string;
  beforeAll(async () => {
    database = await privateDatabase('import_statistics');
    app = await startTestApp({ DATABASE_URL: database.url });
    apiKey = (await provisionTenant(app)).apiKey;
    await importDebts(app, apiKey, 2000);
  });
  afterAll(async () => {
    await app?.close();
    await database?.drop();
  });

  it('imports each under a tenth refresh the statistics once together they grow the table by a tenth', async () => {
    expect(await knownDebtRows(app)).toBe(2000);
    await importDebts(app, apiKey, 60);
    expect(await knownDebtRows(app)).toBe(2000);
    for (let i = 0; i < 4; i += 1) await importDebts(app, apiKey, 60);
    expect(await knownDebtRows(app)).toBeGreaterThan(2000);
  });

  it('an import that brings a tenant the statistics do not know to 100 debts refreshes them, so the planner knows the tenant', async () => {
    const known = await knownDebtRows(app);
    const newcomer = await provisionTenant(app);
    // Under 100 debts a misplanned query costs little: the statistics are left alone.
    await importDebts(app, newcomer.apiKey, 60);
    expect(await knownDebtRows(app)).toBe(known);
    expect(await tenantsInStatistics(database.url)).not.toContain(newcomer.tenantId);
    // Each import far under a tenth of the table, and together under a tenth of its pages.
    await importDebts(app, newcomer.apiKey, 60);
    expect(await knownDebtRows(app)).toBeGreaterThan(known);
    expect(await tenantsInStatistics(database.url)).toContain(newcomer.tenantId);
  });
});
