import type { Database } from '../../lib/db';

/** One round trip through the pool; rejects when the database cannot be reached. */
export function pingDatabase(db: Database): Promise<unknown> {
  return db.pool.query('SELECT 1');
}
