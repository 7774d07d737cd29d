import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import type { Gate } from '../compliance/compliance.types';
import { zeroByGate } from './gate-basis';
import { resolveWindow } from './report-window';
import { selectBlockedByDay } from './reports.repository';

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

export async function blockedStats(deps: Pick<AppDeps, 'db'>, tenantId: string, query: BlockedStatsQuery, now = new Date()): Promise<BlockedStats> {
  const window = resolveWindow(query, now);
  const campaignId = query.campaign_id?.toLowerCase() ?? null;
  const rows =
    window.days.length === 0
      ? []
      : await withTenantSql(deps.db, tenantId, (sql) => selectBlockedByDay(sql, window.days[0]!, window.days[window.days.length - 1]!, campaignId));
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
