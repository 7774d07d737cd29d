import type { AppDeps } from '../../deps';
import { unprocessable } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { chargedBetween, dailyCharges, tenantSmsLimits } from './sms.repository';

export interface SmsUsageQuery {
  from?: string;
  to?: string;
  campaign_id?: string;
}

const round6 = (n: number) => Number(n.toFixed(6));

/** The UTC month holding `now`: [first day 00:00, first day of the next month 00:00). */
export function currentUtcMonth(now: Date): { from: Date; to: Date } {
  return {
    from: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
    to: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}

/**
 * What the tenant was charged for SMS: the rows that carry a charge (the `sent` transitions, each
 * with the price it was charged at) whose occurred_at falls in [from, to), optionally of one
 * campaign, with a UTC-day breakdown. month_to_date_cost_usd and budget_usd are the cap's figures
 * (all campaigns, charged only) whatever the window.
 */
export async function smsUsage(deps: AppDeps, tenantId: string, q: SmsUsageQuery) {
  const now = new Date();
  const month = currentUtcMonth(now);
  const from = q.from ? new Date(q.from) : month.from;
  const to = q.to ? new Date(q.to) : month.to;
  if (from.getTime() > to.getTime()) throw unprocessable("'from' must not be after 'to'");
  const campaignId = q.campaign_id ?? null;

  return withTenantSql(deps.db, tenantId, async (sql) => {
    const daily = await dailyCharges(sql, from, to, campaignId);
    const mtd = await chargedBetween(sql, month.from, month.to);
    const limits = await tenantSmsLimits(sql);
    const days = daily.map((d) => ({ date: d.date, messages: d.messages, segments: d.segments, cost_usd: round6(Number(d.cost_usd)) }));
    return {
      from: from.toISOString(),
      to: to.toISOString(),
      campaign_id: campaignId,
      price_per_segment_usd: deps.config.SMS_PRICE_PER_SEGMENT_USD,
      messages: days.reduce((s, d) => s + d.messages, 0),
      segments: days.reduce((s, d) => s + d.segments, 0),
      cost_usd: round6(daily.reduce((s, d) => s + Number(d.cost_usd), 0)),
      month_to_date_cost_usd: round6(Number(mtd ?? 0)),
      budget_usd: limits.budget_usd,
      daily: days,
    };
  });
}
