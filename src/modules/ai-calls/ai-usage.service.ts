import type { AppDeps } from '../../deps';
import { unprocessable } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { csvLine } from '../compliance-reports/artifact';
import { selectDailyUsage, selectUsageTotals } from './ai-call.repository';
import { utcMonth } from './ai-call.rules';
import type { AiUsage, AiUsageQueryT } from './ai-usage.schemas';

/** A window longer than this is refused: the daily series is one entry per date. */
export const AI_USAGE_MAX_DAYS = 400;

export const AI_USAGE_CSV_COLUMNS = ['date', 'calls', 'billable_seconds', 'billable_minutes', 'cost_usd'] as const;

/**
 * Metered AI usage of the half-open window [from, to) by answer time, with a daily series. Every
 * figure is summed from the rows (money in SQL numeric, rendered with 4 decimals): the totals are
 * the sums of each row's own seconds, minutes and cost at the rate it was metered under.
 */
export async function aiUsage(deps: AppDeps, tenantId: string, q: AiUsageQueryT, now = new Date()): Promise<AiUsage> {
  const month = utcMonth(now);
  const from = q.from ? new Date(q.from) : month.from;
  const to = q.to ? new Date(q.to) : month.to;
  if (from.getTime() >= to.getTime()) throw unprocessable("'from' must be before 'to' (the window is half-open: [from, to))");
  if (to.getTime() - from.getTime() > AI_USAGE_MAX_DAYS * 86_400_000) throw unprocessable(`the window from 'from' to 'to' is at most ${AI_USAGE_MAX_DAYS} days`);
  const campaignId = q.campaign_id?.toLowerCase() ?? null;
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const days = await selectDailyUsage(sql, from, to, campaignId);
    const totals = await selectUsageTotals(sql, String(deps.config.AI_MINUTE_RATE_USD), from, to, campaignId);
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      campaign_id: campaignId,
      minute_rate_usd: totals.rate,
      calls: days.reduce((n, d) => n + d.calls, 0),
      billable_seconds: days.reduce((n, d) => n + d.billable_seconds, 0),
      billable_minutes: days.reduce((n, d) => n + d.billable_minutes, 0),
      estimated_cost_usd: totals.cost,
      daily: days,
    };
  });
}

/** The CSV form: a header line, then one line per date of the daily series (CRLF line ends). */
export function aiUsageCsv(u: AiUsage): string {
  return (
    csvLine([...AI_USAGE_CSV_COLUMNS]) + u.daily.map((d) => csvLine([d.date, d.calls, d.billable_seconds, d.billable_minutes, d.cost_usd])).join('')
  );
}
