import type { SqlTx } from '../../lib/tenancy';

/**
 * A call is in flight from its original row until a correction with `ended_at` exists (the
 * finalize row of the call session, or the reaper's). Calls older than this horizon are past any
 * call_ttl_ms and the reaper's business; the horizon keeps the scan on the started_at index.
 */
export const IN_FLIGHT_HORIZON_MS = 24 * 3600 * 1000;

export interface TenantLimits {
  max_cps: number | null;
  max_concurrent_channels: number | null;
}

export async function tenantLimits(sql: SqlTx): Promise<TenantLimits> {
  const [row] = await sql.query<{ max_cps: number | null; max_concurrent_channels: number | null }>(
    'SELECT max_cps, max_concurrent_channels FROM tenants WHERE id = app_tenant_id()',
    [],
  );
  return { max_cps: row?.max_cps ?? null, max_concurrent_channels: row?.max_concurrent_channels ?? null };
}

/**
 * Calls of the tenant (optionally of one campaign) placed and not yet finished. An original that
 * already carries its end (a CDR row written after the fact) or says it was never placed holds no
 * channel: without these two conditions it would hold one for the whole horizon. Supervisor legs
 * are not call_attempts rows, so they never take a dial channel (supervision has its own quota).
 */
export async function channelsInUse(sql: SqlTx, now: Date, campaignId: string | null = null): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n
       FROM call_attempts o
      WHERE o.corrects_id IS NULL
        AND o.started_at > $1::timestamptz - make_interval(secs => $2 / 1000.0)
        AND ($3::uuid IS NULL OR o.campaign_id = $3::uuid)
        AND o.ended_at IS NULL
        AND coalesce(o.disposition, '') <> 'not_placed'
        AND NOT EXISTS (SELECT 1 FROM call_attempts c WHERE c.corrects_id = o.id AND c.ended_at IS NOT NULL)`,
    [now, IN_FLIGHT_HORIZON_MS, campaignId],
  );
  return row?.n ?? 0;
}

/** Calls of the tenant started in the second before `now` (the max_cps window). */
export async function dialsLastSecond(sql: SqlTx, now: Date): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM call_attempts
      WHERE corrects_id IS NULL AND started_at > $1::timestamptz - interval '1 second' AND started_at <= $1::timestamptz`,
    [now],
  );
  return row?.n ?? 0;
}
