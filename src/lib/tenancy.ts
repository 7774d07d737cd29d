import type { Prisma } from '../../prisma/generated/client';
import type { Database } from './db';

export type Tx = Prisma.TransactionClient;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface WithTenantOptions {
  /** Milliseconds the whole unit of work may take before it is rolled back. */
  timeoutMs?: number;
  isolationLevel?: Prisma.TransactionIsolationLevel;
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
  if (!UUID_RE.test(tenantId)) throw new Error('withTenant: tenant id is not a UUID');
  return db.prisma.$transaction(
    async (tx) => {
      await tx.$executeRaw`SELECT set_config('app.tenant_id', ${tenantId}, true)`;
      return work(tx);
    },
    { timeout: options.timeoutMs ?? 15_000, maxWait: 10_000, isolationLevel: options.isolationLevel },
  );
}
