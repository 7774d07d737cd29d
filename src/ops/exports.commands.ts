import { withTenantSql } from '../lib/tenancy';
import type { OpsContext } from './context';
import { staleExportIds, stuckExportDetails } from './ops.repository';

export interface StuckExport {
  tenant_id: string;
  export_id: string;
  status: string;
  requested_by: string | null;
  created_at: string;
  claimed_at: string | null;
  heartbeat_at: string | null;
  silent_seconds: number;
  filters: Record<string, string>;
}

/**
 * Generating exports (queued or running) silent for longer than `olderThan` seconds: found across
 * tenants by recording_exports_stale (ids only), then read tenant by tenant. The next export
 * request of such a tenant releases them (status failed, "stale claim released").
 */
export async function listStuckExports(ctx: OpsContext, olderThan: number): Promise<StuckExport[]> {
  const stale = await staleExportIds(ctx.deps.db.pool, olderThan);
  const byTenant = new Map<string, string[]>();
  for (const s of stale) byTenant.set(s.tenant_id, [...(byTenant.get(s.tenant_id) ?? []), s.export_id]);
  const out: StuckExport[] = [];
  for (const [tenantId, ids] of byTenant) {
    const rows = await withTenantSql(ctx.deps.db, tenantId, (sql) => stuckExportDetails(sql, tenantId, ids));
    for (const r of rows) {
      out.push({
        tenant_id: tenantId,
        export_id: r.id,
        status: r.status,
        requested_by: r.requested_by,
        created_at: r.created_at.toISOString(),
        claimed_at: r.claimed_at?.toISOString() ?? null,
        heartbeat_at: r.heartbeat_at?.toISOString() ?? null,
        silent_seconds: r.silent_seconds,
        filters: r.filters,
      });
    }
  }
  return out;
}
