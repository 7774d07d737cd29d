import type { Pool } from 'pg';
import type { SqlTx } from '../lib/tenancy';

/** The endpoint a delivery belongs to (the redeliver service is addressed by endpoint and delivery), or null. */
export async function deliveryEndpointOf(sql: SqlTx, deliveryId: string): Promise<string | null> {
  const rows = await sql.query<{ endpoint_id: string }>(`SELECT endpoint_id::text AS endpoint_id FROM webhook_deliveries WHERE id = $1::uuid`, [deliveryId]);
  return rows[0]?.endpoint_id ?? null;
}

/** Across tenants, through the SECURITY DEFINER function that answers only ids: the details are read per tenant. */
export async function staleExportIds(pool: Pick<Pool, 'query'>, staleSeconds: number): Promise<{ export_id: string; tenant_id: string }[]> {
  const res = await pool.query<{ export_id: string; tenant_id: string }>(
    `SELECT export_id::text AS export_id, tenant_id::text AS tenant_id FROM recording_exports_stale($1::int) ORDER BY tenant_id, export_id`,
    [staleSeconds],
  );
  return res.rows;
}

export interface StuckExportRow {
  id: string;
  status: string;
  filters: Record<string, string>;
  requested_by: string | null;
  created_at: Date;
  claimed_at: Date | null;
  heartbeat_at: Date | null;
  /** Seconds since the last sign of life (heartbeat, else claim, else creation). */
  silent_seconds: number;
}

export async function stuckExportDetails(sql: SqlTx, tenantId: string, ids: string[]): Promise<StuckExportRow[]> {
  return sql.query<StuckExportRow>(
    `SELECT id::text AS id, status, filters, requested_by, created_at, claimed_at, heartbeat_at,
            floor(extract(epoch FROM now() - coalesce(heartbeat_at, claimed_at, created_at)))::int AS silent_seconds
       FROM recording_exports
      WHERE tenant_id = $1::uuid AND id = ANY($2::uuid[]) AND status IN ('queued', 'running')
      ORDER BY created_at`,
    [tenantId, ids],
  );
}
