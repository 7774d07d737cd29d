import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { loadConfig } from '../../src/config';
import { dropDatabase, ensureDatabase, ensureRoles } from '../../src/db/bootstrap';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate';
import { testEnv } from '../helpers/harness';

jest.setTimeout(120_000);

const OWNERSHIP = '20261127031000_did_ownership';

/**
 * Numbers that were active in several tenants before ownership was enforced: a scratch database
 * migrated up to the migration before it, duplicates written as the old API accepted them, then
 * the ownership migration applied.
 */
describe('migration: a number active in several tenants keeps its oldest holder', () => {
  const scratchUrl = (() => {
    const url = new URL(loadConfig(testEnv()).ownerDatabaseUrl);
    url.pathname = `/dialer_mig_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    return url.toString();
  })();
  const dir = mkdtempSync(path.join(tmpdir(), 'dialer-did-ownership-'));
  let client: Client;

  beforeAll(async () => {
    for (const name of readdirSync(MIGRATIONS_DIR)) {
      if (/^\d{14}_/.test(name) && name < OWNERSHIP) cpSync(path.join(MIGRATIONS_DIR, name), path.join(dir, name), { recursive: true });
    }
    await ensureDatabase(scratchUrl);
    await ensureRoles(scratchUrl);
    await migrate(scratchUrl, dir);
    client = new Client({ connectionString: scratchUrl });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    rmSync(dir, { recursive: true, force: true });
    await dropDatabase(scratchUrl);
  });

  it('the oldest active row keeps the number, the others move to quarantine; active customer DIDs count as proven (legacy)', async () => {
    const tenants = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of tenants) await client.query('INSERT INTO tenants (id, account_id, name) VALUES ($1, $2, $3)', [id, randomUUID(), `mig-${id}`]);
    const did = async (tenant: string, e164: string, status: string, origin: string, createdAt: string) =>
      (
        await client.query<{ id: string }>(
          'INSERT INTO dids (tenant_id, e164, status, origin, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id',
          [tenant, e164, status, origin, createdAt],
        )
      ).rows[0]!.id;
    const shared = '+13125550100';
    const newest = await did(tenants[0]!, shared, 'active', 'customer', '2026-03-01T00:00:00Z');
    const oldest = await did(tenants[1]!, shared, 'active', 'customer', '2026-01-01T00:00:00Z');
    const middle = await did(tenants[2]!, shared, 'active', 'house', '2026-02-01T00:00:00Z');
    const parked = await did(tenants[0]!, '+13125550101', 'quarantine', 'customer', '2026-01-01T00:00:00Z');
    const sole = await did(tenants[2]!, '+13125550102', 'active', 'customer', '2026-01-01T00:00:00Z');

    cpSync(path.join(MIGRATIONS_DIR, OWNERSHIP), path.join(dir, OWNERSHIP), { recursive: true });
    await migrate(scratchUrl, dir);

    const { rows } = await client.query<{ id: string; status: string; verification_status: string | null; verification_method: string | null }>(
      'SELECT id, status, verification_status, verification_method FROM dids',
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(oldest)).toMatchObject({ status: 'active', verification_status: 'verified', verification_method: 'legacy' });
    expect(byId.get(middle)).toMatchObject({ status: 'quarantine', verification_status: null });
    expect(byId.get(newest)).toMatchObject({ status: 'quarantine', verification_status: null });
    expect(byId.get(parked)).toMatchObject({ status: 'quarantine', verification_status: null });
    expect(byId.get(sole)).toMatchObject({ status: 'active', verification_status: 'verified', verification_method: 'legacy' });

    await expect(client.query("UPDATE dids SET status = 'active' WHERE id = $1", [newest])).rejects.toThrow(/dids_e164_active_key/);
  });
});
