import type { PoolClient, QueryResult, QueryResultRow } from 'pg';
import type { Prisma } from '../../prisma/generated/client';
import type { Database } from './db';

export type Tx = Prisma.TransactionClient;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface WithTenantOptions {
  /** Milliseconds the whole unit of work may take before it is rolled back. */
  timeoutMs?: number;
  isolationLevel?: Prisma.TransactionIsolationLevel;
}

export function assertTenantId(tenantId: string): void {
  if (!UUID_RE.test(tenantId)) throw new Error('withTenant: tenant id is not a UUID');
}

/**
 * The only way to touch tenant data: one transaction that first sets `app.tenant_id` (local to
 * the transaction, so a pooled connection never carries it to the next caller), then runs the
 * unit of work. Row-level security does the isolation; this just names the tenant.
 */
export async function withTenant<T>(
  db: Database,
  tenantId: string,
  work: (tx: Tx) => Promise<T>,
  options: WithTenantOptions = {},
): Promise<T> {
  assertTenantId(tenantId);
  return db.prisma.$transaction(
    async (tx) => {
      await tx.$executeRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
      return work(tx);
    },
    { timeout: options.timeoutMs ?? 15_000, maxWait: 10_000, isolationLevel: options.isolationLevel },
  );
}

/** Parameterized SQL inside a tenant transaction. */
export interface SqlTx {
  /**
   * `name` makes it a prepared statement, parsed and planned once per pooled connection: for the
   * engine's large statements planning costs more than executing.
   */
  query<R extends QueryResultRow>(text: string, values?: unknown[], name?: string): Promise<R[]>;
}

/**
 * The same tenant transaction as withTenant, over plain SQL, for hot paths that must be
 * set-based (compliance decisions, lead selection, imports, the per-request tenant read).
 * Prisma's client-side work costs about half a millisecond of CPU per statement; these paths
 * cannot afford it.
 */
export async function withTenantSql<T>(db: Database, tenantId: string, work: (sql: SqlTx) => Promise<T>): Promise<T> {
  assertTenantId(tenantId);
  const client: PoolClient = await db.pool.connect();
  let broken = false;
  // A backend that dies mid-transaction is reported as an event of the checked-out client:
  // unheard, it would crash the process; the next statement fails on the dead connection instead.
  const lost = () => {
    broken = true;
  };
  client.on('error', lost);
  try {
    // One round trip: the id is a validated UUID, so inlining it into the simple-protocol message
    // is safe, and BEGIN plus the setting travel together.
    await client.query(`BEGIN; SELECT set_config('app.tenant_id', '${tenantId.toLowerCase()}', true)`);
    const result = await work({
      query: async <R extends QueryResultRow>(text: string, values?: unknown[], name?: string) =>
        (await client.query<R>(name ? { name, text, values } : { text, values })).rows,
    });
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    client.off('error', lost);
    client.release(broken);
  }
}

/**
 * One statement over tenant rows in one round trip, for the hottest reads (the tenant of every
 * `/v1/me`). The tenant setting and the statement travel as one simple-protocol message, which
 * PostgreSQL runs as one implicit transaction, so the setting is local to it as in withTenantSql.
 * The statement takes no parameters (the simple protocol has none): it reads the tenant as
 * `current_setting('app.tenant_id')::uuid`.
 */
export async function readAsTenant<R extends QueryResultRow>(db: Database, tenantId: string, statement: string): Promise<R[]> {
  assertTenantId(tenantId);
  if (statement.includes(';')) throw new Error('readAsTenant: one statement only');
  const results = (await db.pool.query(`SELECT set_config('app.tenant_id', '${tenantId.toLowerCase()}', true); ${statement}`)) as unknown as QueryResult<R>[];
  return results[1]!.rows;
}
