import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import type { Gate } from '../compliance/compliance.types';
import { zeroByGate } from './gate-basis';
import { resolveWindow } from './report-window';

export interface BlockedStatsQuery {
  from?: string;
  to?: string;
  campaign_id?: string;
}

export interface BlockedStats {
  from: string;
  to: string;
  campaign_id: string | null;
  total: number;
  by_gate: Record<Gate, number>;
  daily: { date: string; total: number; by_gate: Record<Gate, number> }[];
}

/**
 * One statement: every UTC date of the window (generate_series, so empty days are present) left
 * joined to the refusal rows counted per (day, gate). A row of compliance_refusals is one
 * prevented (debt, gate, campaign, UTC day) violation, however many attempts it refused.
 */
const BLOCKED_SQL = `
WITH days AS (
  SELECT d::date AS day FROM generate_series($1::date, $2::date, interval '1 day') AS d
),
counts AS (
  SELECT r.day, r.gate, count(*)::int AS n
    FROM compliance_refusals r
   WHERE r.tenant_id = app_tenant_id()
     AND r.day BETWEEN $1::date AND $2::date
     AND ($3::uuid IS NULL OR r.campaign_id = $3::uuid)
   GROUP BY r.day, r.gate
)
SELECT to_char(days.day, 'YYYY-MM-DD') AS day,
       coalesce(jsonb_object_agg(c.gate, c.n) FILTER (WHERE c.gate IS NOT NULL), '{}'::jsonb) AS by_gate
  FROM days LEFT JOIN counts c ON c.day = days.day
 GROUP BY days.day
 ORDER BY days.day`;

export async function blockedStats(deps: Pick<AppDeps, 'db'>, tenantId: string, query: BlockedStatsQuery, now = new Date()): Promise<BlockedStats> {
  const window = resolveWindow(query, now);
  const campaignId = query.campaign_id?.toLowerCase() ?? null;
  const rows =
    window.days.length === 0
      ? []
      : await withTenantSql(deps.db, tenantId, (sql) =>
          sql.query<{ day: string; by_gate: Record<string, number> }>(BLOCKED_SQL, [window.days[0], window.days[window.days.length - 1], campaignId]),
        );
  const byGate = zeroByGate();
  const daily = rows.map((row) => {
    const dayByGate = zeroByGate();
    let total = 0;
    for (const [gate, n] of Object.entries(row.by_gate)) {
      if (!(gate in dayByGate)) continue;
      dayByGate[gate as Gate] = n;
      byGate[gate as Gate] += n;
      total += n;
    }
    return { date: row.day, total, by_gate: dayByGate };
  });
  return {
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    campaign_id: campaignId,
    total: daily.reduce((sum, d) => sum + d.total, 0),
    by_gate: byGate,
    daily,
  };
}
