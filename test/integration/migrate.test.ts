import { createHash, randomUUID } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { loadConfig } from '../../src/config';
import { dropDatabase, ensureDatabase, ensureRoles } from '../../src/db/bootstrap';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate';
import { testEnv } from '../helpers/harness';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function migrationNames(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && /^\d{14}_\S+$/.test(e.name))
    .map((e) => e.name)
    .sort();
}

async function withClient<T>(url: string, work: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const ownerUrl = () => loadConfig(testEnv()).ownerDatabaseUrl;

describe('migrations on the test database', () => {
  const names = migrationNames(MIGRATIONS_DIR);

  it('has migrations to check (not vacuous)', () => {
    expect(names).toContain('20261122000000_foundation');
  });

  it('re-running applies nothing (idempotent), also when two migrators race', async () => {
    const [first, second] = await Promise.all([migrate(ownerUrl()), migrate(ownerUrl())]);
    expect(first).toEqual({ applied: [], alreadyApplied: names.length });
    expect(second).toEqual({ applied: [], alreadyApplied: names.length });
  });

  it('records every migration once in _prisma_migrations with checksum = sha256(migration.sql)', async () => {
    const rows = await withClient(ownerUrl(), async (c) =>
      (
        await c.query<{ migration_name: string; checksum: string; finished: boolean; rolled_back: boolean; applied_steps_count: number; id: string }>(
          `SELECT id, migration_name, checksum, finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS rolled_back,
                  applied_steps_count FROM _prisma_migrations ORDER BY migration_name`,
        )
      ).rows,
    );
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const row of rows) {
      const file = readFileSync(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'), 'utf8');
      expect({ name: row.migration_name, checksum: row.checksum }).toEqual({ name: row.migration_name, checksum: sha256(file) });
      expect(row).toMatchObject({ finished: true, rolled_back: false, applied_steps_count: 1 });
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('has Prisma’s _prisma_migrations columns', async () => {
    const cols = await withClient(ownerUrl(), async (c) =>
      (
        await c.query<{ column_name: string; data_type: string; is_nullable: string }>(
          `SELECT column_name, data_type, is_nullable FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name = '_prisma_migrations' ORDER BY ordinal_position`,
        )
      ).rows,
    );
    expect(cols).toEqual([
      { column_name: 'id', data_type: 'character varying', is_nullable: 'NO' },
      { column_name: 'checksum', data_type: 'character varying', is_nullable: 'NO' },
      { column_name: 'finished_at', data_type: 'timestamp with time zone', is_nullable: 'YES' },
      { column_name: 'migration_name', data_type: 'character varying', is_nullable: 'NO' },
      { column_name: 'logs', data_type: 'text', is_nullable: 'YES' },
      { column_name: 'rolled_back_at', data_type: 'timestamp with time zone', is_nullable: 'YES' },
      { column_name: 'started_at', data_type: 'timestamp with time zone', is_nullable: 'NO' },
      { column_name: 'applied_steps_count', data_type: 'integer', is_nullable: 'NO' },
    ]);
  });

  it('leaves every table, sequence, view and function of the schema owned by dialer_owner', async () => {
    const foreign = await withClient(ownerUrl(), async (c) =>
      (
        await c.query(
          `SELECT 'relation' AS kind, k.relname AS name, pg_get_userbyid(k.relowner) AS owner
             FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace
            WHERE n.nspname = 'public' AND k.relkind IN ('r', 'p', 'S', 'v', 'm') AND pg_get_userbyid(k.relowner) <> 'dialer_owner'
           UNION ALL
           SELECT 'function', p.proname, pg_get_userbyid(p.proowner)
             FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) <> 'dialer_owner'`,
        )
      ).rows,
    );
    expect(foreign).toEqual([]);
  });
});

describe('migrations on a scratch database', () => {
  const scratchName = `dialer_mig_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let scratchUrl: string;
  let dir: string;

  const recorded = () =>
    withClient(scratchUrl, async (c) =>
      (await c.query<{ migration_name: string; checksum: string }>('SELECT migration_name, checksum FROM _prisma_migrations ORDER BY migration_name')).rows,
    );
  const tableExists = (name: string) =>
    withClient(scratchUrl, async (c) => (await c.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [`public.${name}`])).rows[0].present as boolean);

  beforeAll(async () => {
    const url = new URL(ownerUrl());
    url.pathname = `/${scratchName}`;
    scratchUrl = url.toString();
    await ensureDatabase(scratchUrl);
    await ensureRoles(scratchUrl);
    dir = mkdtempSync(path.join(tmpdir(), 'dialer-migrations-'));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    // Files and folders that are not migrations are ignored.
    writeFileSync(path.join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
    mkdirSync(path.join(dir, 'notes'));
    writeFileSync(path.join(dir, 'notes', 'migration.sql'), 'this is not SQL;');
  });

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await dropDatabase(scratchUrl);
  });

  it('applies everything once on an empty database, even with two migrators racing', async () => {
    const names = migrationNames(dir);
    const results = await Promise.all([migrate(scratchUrl, dir), migrate(scratchUrl, dir)]);
    const applied = results.flatMap((r) => r.applied).sort();
    expect(applied).toEqual(names);
    expect(results.some((r) => r.applied.length === 0 && r.alreadyApplied === names.length)).toBe(true);
    expect((await recorded()).map((r) => r.migration_name)).toEqual(names);
    expect(await tableExists('audit_log')).toBe(true);
  });

  it('applies nothing on a second run', async () => {
    const names = migrationNames(dir);
    await expect(migrate(scratchUrl, dir)).resolves.toEqual({ applied: [], alreadyApplied: names.length });
  });

  it('applies a new migration, recorded with its checksum', async () => {
    const name = '20990101000000_probe';
    const sql = 'CREATE TABLE migration_probe (id integer PRIMARY KEY);\n';
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), sql);
    const result = await migrate(scratchUrl, dir);
    expect(result.applied).toEqual([name]);
    expect(await tableExists('migration_probe')).toBe(true);
    expect((await recorded()).find((r) => r.migration_name === name)?.checksum).toBe(sha256(sql));
    // Created as the owner role.
    const owner = await withClient(scratchUrl, async (c) => (await c.query(`SELECT pg_get_userbyid(relowner) AS o FROM pg_class WHERE relname = 'migration_probe'`)).rows[0].o);
    expect(owner).toBe('dialer_owner');
  });

  it('applies a timestamped folder with an unusual name instead of skipping it', async () => {
    const name = '20990101500000_Add-Probe-Index';
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), 'CREATE INDEX migration_probe_idx ON migration_probe (id);\n');
    await expect(migrate(scratchUrl, dir)).resolves.toMatchObject({ applied: [name] });
    expect(await tableExists('migration_probe_idx')).toBe(true);
  });

  it('refuses a migration folder without migration.sql', async () => {
    const name = '20990101600000_empty';
    mkdirSync(path.join(dir, name));
    await expect(migrate(scratchUrl, dir)).rejects.toThrow(/ENOENT/);
    writeFileSync(path.join(dir, name, 'migration.sql'), '-- nothing to do\n');
    await expect(migrate(scratchUrl, dir)).resolves.toMatchObject({ applied: [name] });
  });

  it('rolls a failing migration back completely and records nothing', async () => {
    const name = '20990102000000_broken';
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), 'CREATE TABLE half_done (id int);\nSELECT no_such_function();\n');
    await expect(migrate(scratchUrl, dir)).rejects.toThrow(/migration 20990102000000_broken failed/);
    expect(await tableExists('half_done')).toBe(false);
    expect((await recorded()).map((r) => r.migration_name)).not.toContain(name);
    // Fixed, it applies.
    writeFileSync(path.join(dir, name, 'migration.sql'), 'CREATE TABLE half_done (id int);\n');
    await expect(migrate(scratchUrl, dir)).resolves.toMatchObject({ applied: [name] });
    expect(await tableExists('half_done')).toBe(true);
  });

  it('refuses a migration modified after it was applied, and applies nothing after it', async () => {
    const before = await recorded();
    const pending = '20990103000000_after_tamper';
    mkdirSync(path.join(dir, pending));
    writeFileSync(path.join(dir, pending, 'migration.sql'), 'CREATE TABLE after_tamper (id int);\n');
    appendFileSync(path.join(dir, '20261122000000_foundation', 'migration.sql'), '\n-- edited after it was applied\n');
    await expect(migrate(scratchUrl, dir)).rejects.toThrow(/migration 20261122000000_foundation was modified after it was applied/);
    expect(await recorded()).toEqual(before);
    expect(await tableExists('after_tamper')).toBe(false);
    // Even a whitespace-only change counts.
    cpSync(path.join(MIGRATIONS_DIR, '20261122000000_foundation', 'migration.sql'), path.join(dir, '20261122000000_foundation', 'migration.sql'));
    appendFileSync(path.join(dir, '20261122000000_foundation', 'migration.sql'), ' ');
    await expect(migrate(scratchUrl, dir)).rejects.toThrow(/modified after it was applied/);
    // Restored byte for byte, it proceeds.
    cpSync(path.join(MIGRATIONS_DIR, '20261122000000_foundation', 'migration.sql'), path.join(dir, '20261122000000_foundation', 'migration.sql'));
    await expect(migrate(scratchUrl, dir)).resolves.toMatchObject({ applied: [pending] });
  });
});
