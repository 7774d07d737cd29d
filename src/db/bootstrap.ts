import { Client } from 'pg';
import { APP_ROLE, OWNER_ROLE } from '../config';

const DUPLICATE_DATABASE = '42P04';
const DUPLICATE_OBJECT = '42710';
const UNIQUE_VIOLATION = '23505';

function isCode(err: unknown, ...codes: string[]): boolean {
  return typeof err === 'object' && err !== null && codes.includes((err as { code?: string }).code ?? '');
}

/** Creates the database named by the URL when missing (concurrent callers are fine). */
/** The database a URL names, and a client on the cluster's maintenance database to act on it. */
async function withMaintenance(ownerUrl: string, work: (client: Client, dbName: string) => Promise<void>): Promise<void> {
  const dbName = decodeURIComponent(new URL(ownerUrl).pathname.replace(/^\//, ''));
  if (!dbName) throw new Error('DATABASE_URL names no database');
  const maintenance = new URL(ownerUrl);
  maintenance.pathname = '/postgres';
  const client = new Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    await work(client, dbName);
  } finally {
    await client.end();
  }
}

export async function ensureDatabase(ownerUrl: string): Promise<void> {
  await withMaintenance(ownerUrl, async (client, dbName) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
    if (rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${dbName.replace(/"/g, '""')}"`);
      } catch (err) {
        if (!isCode(err, DUPLICATE_DATABASE, UNIQUE_VIOLATION)) throw err;
      }
    }
  });
}

/**
 * Drops the database a URL names, closing its connections: for the disposable databases of tests,
 * benches and fault runs only (never called by the service).
 */
export async function dropDatabase(ownerUrl: string): Promise<void> {
  await withMaintenance(ownerUrl, async (client, dbName) => {
    await client.query(`DROP DATABASE IF EXISTS "${dbName.replace(/"/g, '""')}" WITH (FORCE)`);
  });
}

/**
 * The two roles of the tenancy model (cluster-wide, so created here and not in a migration):
 * dialer_owner owns the schema, runs migrations and owns the credential-lookup functions;
 * dialer_app is what the API and workers log in as: it owns nothing and cannot bypass RLS.
 * On a managed database where the connecting user may not create roles, a DBA creates them once
 * with the same statements (see README).
 */
export async function ensureRoles(ownerUrl: string): Promise<void> {
  const client = new Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    const dbName = (await client.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db;
    const statements = [
      `CREATE ROLE ${OWNER_ROLE} NOLOGIN BYPASSRLS`,
      `CREATE ROLE ${APP_ROLE} LOGIN NOBYPASSRLS NOSUPERUSER NOCREATEDB NOCREATEROLE`,
    ];
    for (const sql of statements) {
      try {
        await client.query(sql);
      } catch (err) {
        if (!isCode(err, DUPLICATE_OBJECT, UNIQUE_VIOLATION)) throw err;
      }
    }
    const quotedDb = `"${dbName.replace(/"/g, '""')}"`;
    await client.query(`GRANT ${OWNER_ROLE} TO CURRENT_USER`).catch((err: unknown) => {
      // Already a member, or a superuser that needs no membership.
      if (!isCode(err, '0LP01', '42501', UNIQUE_VIOLATION)) throw err;
    });
    await client.query(`GRANT CONNECT, TEMPORARY ON DATABASE ${quotedDb} TO ${APP_ROLE}`);
    await client.query(`GRANT CONNECT, CREATE ON DATABASE ${quotedDb} TO ${OWNER_ROLE}`);
    await client.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${OWNER_ROLE}`);
    await client.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
  } finally {
    await client.end();
  }
}
