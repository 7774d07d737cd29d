import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from 'pg';
import { OWNER_ROLE, ROOT_DIR } from '../config';
import { ensureDatabase, ensureRoles } from './bootstrap';

export const MIGRATIONS_DIR = path.join(ROOT_DIR, 'prisma', 'migrations');
// Any fixed key: serializes concurrent migrators (several test workers, API and worker processes).
const MIGRATION_LOCK_KEY = 72_0036;

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

/** A migration folder: a 14-digit timestamp, an underscore and any name (as `prisma migrate` makes them). */
export const MIGRATION_DIR_RE = /^\d{14}_\S+$/;

async function readMigrations(dir: string): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  // Every timestamped folder is a migration: one with an unusual name (capitals, hyphens) is
  // applied, never silently skipped. Other folders and files (migration_lock.toml) are not.
  const names = entries
    .filter((e) => e.isDirectory() && MIGRATION_DIR_RE.test(e.name))
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/**
 * Applies pending SQL migrations in Prisma's layout and records them in a `_prisma_migrations`
 * table with Prisma's columns and checksums, so `prisma migrate status` reads the same history.
 * Each migration runs in its own transaction as the owner role.
 */
export async function migrate(ownerUrl: string, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  const migrations = await readMigrations(dir);
  const client = new Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`SET ROLE ${OWNER_ROLE}`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS _prisma_migrations (
        id                  varchar(36) PRIMARY KEY NOT NULL,
        checksum            varchar(64) NOT NULL,
        finished_at         timestamptz,
        migration_name      varchar(255) NOT NULL,
        logs                text,
        rolled_back_at      timestamptz,
        started_at          timestamptz NOT NULL DEFAULT now(),
        applied_steps_count integer NOT NULL DEFAULT 0
      )`);
    const { rows } = await client.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM _prisma_migrations
        WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const done = new Map(rows.map((r) => [r.migration_name, r.checksum]));
    const applied: string[] = [];
    for (const m of migrations) {
      const recorded = done.get(m.name);
      if (recorded !== undefined) {
        if (recorded !== m.checksum) {
          throw new Error(`migration ${m.name} was modified after it was applied (checksum mismatch)`);
        }
        continue;
      }
      const id = randomUUID();
      await client.query('BEGIN');
      try {
        await client.query(
          `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())`,
          [id, m.checksum, m.name],
        );
        await client.query(m.sql);
        await client.query(
          `UPDATE _prisma_migrations SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`,
          [id],
        );
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(m.name);
    }
    return { applied, alreadyApplied: migrations.length - applied.length };
  } finally {
    await client.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
    await client.end();
  }
}

/** bootstrap + migrate: what `npm run migrate`, `npm start` and the test harness run. */
export async function prepareDatabase(ownerUrl: string): Promise<MigrationResult> {
  await ensureDatabase(ownerUrl);
  await ensureRoles(ownerUrl);
  return migrate(ownerUrl);
}
