import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { PACING_DECIMALS } from '../campaigns/campaign-stats.view';
import { resolveWindow } from './report-window';
import { selectAbandonment } from './reports.repository';

export interface AbandonmentStatsQuery {
  from?: string;
  to?: string;
  campaign_id?: string;
}

export interface CampaignAbandonment {
  campaign_id: string;
  human_answered: number;
  connected: number;
  abandoned: number;
  abandonment_rate: string | null;
}

export interface AbandonmentStats {
  from: string;
  to: string;
  campaign_id: string | null;
  by_campaign: CampaignAbandonment[];
}

export async function abandonmentStats(deps: Pick<AppDeps, 'db'>, tenantId: string, query: AbandonmentStatsQuery, now = new Date()): Promise<AbandonmentStats> {
  const window = resolveWindow(query, now);
  const campaignId = query.campaign_id?.toLowerCase() ?? null;
  const rows = await withTenantSql(deps.db, tenantId, (sql) => selectAbandonment(sql, window.from, window.to, campaignId));
  return {
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    campaign_id: campaignId,
    by_campaign: rows.map((r) => {
      const humanAnswered = r.connected + r.abandoned;
      return {
        campaign_id: r.campaign_id,
        human_answered: humanAnswered,
        connected: r.connected,
        abandoned: r.abandoned,
        abandonment_rate: humanAnswered === 0 ? null : (r.abandoned / humanAnswered).toFixed(PACING_DECIMALS),
      };
    }),
  };
}
