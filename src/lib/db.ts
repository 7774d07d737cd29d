import { PrismaPg } from '@prisma/adapter-pg';
import { Pool } from 'pg';
import { PrismaClient } from '../../prisma/generated/client';

export interface Database {
  /** Pool of dialer_app connections (no BYPASSRLS). */
  pool: Pool;
  /** Prisma over the same pool. Tenant data is reached only through withTenant(). */
  prisma: PrismaClient;
  close(): Promise<void>;
}

export function createDatabase(appDatabaseUrl: string, poolMax: number): Database {
  const pool = new Pool({ connectionString: appDatabaseUrl, max: poolMax, idleTimeoutMillis: 30_000 });
  // An idle client that loses its server (restart, failover) must not crash the process.
  pool.on('error', () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    pool,
    prisma,
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
