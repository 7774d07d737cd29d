import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { loadConfig } from '../../src/config';
import { dropDatabase, ensureDatabase, ensureRoles } from '../../src/db/bootstrap';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate';
import { placeOfPostalCode } from '../../src/lib/phone-geo';
import { testEnv } from '../helpers/harness';

jest.setTimeout(120_000);

const BACKFILL = '20261127023000_contact_postal_state';

/**
 * The backfill of debt_contacts.postal_state on contacts stored before the import resolved it: a
 * scratch database migrated up to the migration before it, contacts written as a pre-existing
 * import left them, then the backfill applied.
 */
describe('migration: contacts keep the state of their postal code', () => {
  const scratchUrl = (() => {
    const url = new URL(loadConfig(testEnv()).ownerDatabaseUrl);
    url.pathname = `/dialer_mig_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    return url.toString();
  })();
  const dir = mkdtempSync(path.join(tmpdir(), 'dialer-postal-state-'));
  let client: Client;

  beforeAll(async () => {
    for (const name of readdirSync(MIGRATIONS_DIR)) {
      if (/^\d{14}_/.test(name) && name < BACKFILL) cpSync(path.join(MIGRATIONS_DIR, name), path.join(dir, name), { recursive: true });
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

  it('resolves the state of stored US ZIPs as the import does, and leaves other codes and resolved contacts alone', async () => {
    const tenantId = randomUUID();
    await client.query(`INSERT INTO tenants (id, account_id, name) VALUES ($1, $2, $3)`, [tenantId, randomUUID(), `mig-${tenantId}`]);
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO debts (tenant_id, external_ref, consumer_ref) VALUES ($1, 'e', 'c') RETURNING id`,
      [tenantId],
    );
    const debtId = rows[0]!.id;
    // Given us_state beside a postal code of another state (the import used to keep only us_state), a
    // ZIP+4, ZIPs on the DC line and in a straddling prefix, a code that is no US ZIP, none at all.
    const postal: Array<[string | null, string | null]> = [
      ['10451', 'CT'],
      ['10001-1234', null],
      ['20041', null],
      ['20001', null],
      ['06390', null],
      ['96939', null],
      ['98101', null],
      ['SW1A 1AA', 'NJ'],
      [null, 'MA'],
    ];
    for (const [i, [code, state]] of postal.entries()) {
      await client.query(
        `INSERT INTO debt_contacts (tenant_id, debt_id, phone_e164, postal_code, us_state) VALUES ($1, $2, $3, $4, $5)`,
        [tenantId, debtId, `+1212555${String(1000 + i)}`, code, state],
      );
    }
    // A contact whose state was already resolved keeps it.
    await client.query(`INSERT INTO debt_contacts (tenant_id, debt_id, phone_e164, postal_code, postal_state) VALUES ($1, $2, '+12125559999', '10001', 'NY')`, [
      tenantId,
      debtId,
    ]);

    cpSync(path.join(MIGRATIONS_DIR, BACKFILL), path.join(dir, BACKFILL), { recursive: true });
    expect((await migrate(scratchUrl, dir)).applied).toEqual([BACKFILL]);

    const stored = await client.query<{ postal_code: string | null; postal_state: string | null }>(
      `SELECT postal_code, postal_state FROM debt_contacts WHERE debt_id = $1 ORDER BY phone_e164`,
      [debtId],
    );
    expect(stored.rows.map((r) => [r.postal_code, r.postal_state])).toEqual([
      ...postal.map(([code]) => [code, code === null ? null : (placeOfPostalCode(code).state ?? null)]),
      ['10001', 'NY'],
    ]);
    // The expectation is the import's own resolution; spelled out, so a change of both cannot hide.
    expect(stored.rows.map((r) => r.postal_state)).toEqual(['NY', 'NY', 'VA', 'DC', 'NY', 'PW', 'WA', null, null, 'NY']);
  });
});
