import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { PACING_DECIMALS } from '../campaigns/campaign-stats.view';
import { resolveWindow } from './report-window';

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

/**
 * Per campaign, the outbound calls placed in [from, to) whose engine outcome (the first final row,
 * as the dial loop's pacing reads it) was a person connected to an agent or abandoned: the figure
 * 47 CFR 64.1200(a)(7) measures per campaign over 30 days, taken from the CDR rather than from
 * process counters, so it survives restarts and is the record.
 */
const ABANDONMENT_SQL = `
SELECT o.campaign_id::text AS campaign_id,
       count(*) FILTER (WHERE f.disposition = 'answered_human')::int AS connected,
       count(*) FILTER (WHERE f.disposition = 'abandoned')::int AS abandoned
  FROM call_attempts o
  JOIN LATERAL (SELECT c.disposition FROM call_attempts c
                 WHERE c.corrects_id = o.id AND c.ended_at IS NOT NULL ORDER BY c.inserted_at LIMIT 1) f ON true
 WHERE o.tenant_id = app_tenant_id()
   AND o.corrects_id IS NULL
   AND o.direction = 'outbound'
   AND o.campaign_id IS NOT NULL
   AND ($3::uuid IS NULL OR o.campaign_id = $3::uuid)
   AND o.started_at >= $1 AND o.started_at < $2
   AND f.disposition IN ('answered_human', 'abandoned')
 GROUP BY o.campaign_id
 ORDER BY o.campaign_id`;

export async function abandonmentStats(deps: Pick<AppDeps, 'db'>, tenantId: string, query: AbandonmentStatsQuery, now = new Date()): Promise<AbandonmentStats> {
  const window = resolveWindow(query, now);
  const campaignId = query.campaign_id?.toLowerCase() ?? null;
  const rows = await withTenantSql(deps.db, tenantId, (sql) =>
    sql.query<{ campaign_id: string; connected: number; abandoned: number }>(ABANDONMENT_SQL, [window.from, window.to, campaignId]),
  );
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
