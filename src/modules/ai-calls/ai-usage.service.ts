import type { AppDeps } from '../../deps';
import { unprocessable } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { csvLine } from '../compliance-reports/artifact';
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
    const days = await sql.query<{ date: string; calls: number; billable_seconds: number; billable_minutes: number; cost_usd: string }>(
      `WITH u AS (
         SELECT (answered_at AT TIME ZONE 'UTC')::date AS day, billable_seconds, ceil(billable_seconds / 60.0)::int AS minutes, cost_usd
           FROM ai_usage
          WHERE answered_at >= $1 AND answered_at < $2 AND ($3::uuid IS NULL OR campaign_id = $3::uuid))
       SELECT to_char(d.day, 'YYYY-MM-DD') AS date, count(u.day)::int AS calls, coalesce(sum(u.billable_seconds), 0)::int AS billable_seconds,
              coalesce(sum(u.minutes), 0)::int AS billable_minutes, coalesce(sum(u.cost_usd), 0)::numeric(16, 4)::text AS cost_usd
         FROM generate_series(($1::timestamptz AT TIME ZONE 'UTC')::date, (($2::timestamptz - interval '1 millisecond') AT TIME ZONE 'UTC')::date,
                              interval '1 day') AS d(day)
         LEFT JOIN u ON u.day = d.day::date
        GROUP BY d.day ORDER BY d.day`,
      [from, to, campaignId],
    );
    const [totals] = await sql.query<{ rate: string; cost: string }>(
      `SELECT $1::numeric(10, 4)::text AS rate,
              coalesce((SELECT sum(cost_usd) FROM ai_usage WHERE answered_at >= $2 AND answered_at < $3 AND ($4::uuid IS NULL OR campaign_id = $4::uuid)), 0)
                ::numeric(16, 4)::text AS cost`,
      [String(deps.config.AI_MINUTE_RATE_USD), from, to, campaignId],
    );
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      campaign_id: campaignId,
      minute_rate_usd: totals!.rate,
      calls: days.reduce((n, d) => n + d.calls, 0),
      billable_seconds: days.reduce((n, d) => n + d.billable_seconds, 0),
      billable_minutes: days.reduce((n, d) => n + d.billable_minutes, 0),
      estimated_cost_usd: totals!.cost,
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
