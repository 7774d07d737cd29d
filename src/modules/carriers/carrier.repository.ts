import type { Database } from '../../lib/db';
import type { SqlTx } from '../../lib/tenancy';

/** What the switch needs of a carrier's gateway: only an active carrier with a sip_proxy is answered. */
export async function switchCarrierGateway(db: Database, carrierId: string): Promise<{ id: string; sip_proxy: string } | null> {
  const { rows } = await db.pool.query<{ id: string; sip_proxy: string }>('SELECT id, sip_proxy FROM switch_carrier_gateway($1::uuid)', [carrierId]);
  return rows[0] ?? null;
}

/** The campaign's `carrier` (a carrier id, or null). */
export async function campaignCarrier(sql: SqlTx, campaignId: string): Promise<string | null> {
  const [row] = await sql.query<{ carrier: string | null }>('SELECT carrier FROM campaigns WHERE id = $1::uuid', [campaignId]);
  return row?.carrier ?? null;
}

/** A carrier's status as the tenant sees it (row-level security: its own and its account's), or null. */
export async function carrierStatus(sql: SqlTx, carrierId: string): Promise<string | null> {
  const [row] = await sql.query<{ status: string }>('SELECT status FROM carriers WHERE id = $1::uuid', [carrierId]);
  return row?.status ?? null;
}
