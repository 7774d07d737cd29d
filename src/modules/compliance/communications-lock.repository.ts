import type { SqlTx } from '../../lib/tenancy';

/**
 * The one lock every communication decision of a tenant takes (the dial tick, a manual dial, an SMS
 * send), held until its transaction commits, so each decision reads the counts with the call or
 * text the previous one recorded: a call and a text at the same moment cannot both pass a cap that
 * counts both channels. Take it before any row lock of the transaction (a debt FOR UPDATE, a ledger
 * row's foreign-key share lock), so all three paths lock in the same order and never deadlock.
 */
export async function lockCommunications(sql: SqlTx, tenantId: string): Promise<void> {
  await sql.query(`SELECT pg_advisory_xact_lock(hashtextextended('communications:' || $1::text, 0))`, [tenantId]);
}
