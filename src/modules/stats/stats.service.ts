import type { AppDeps } from '../../deps';
import { unprocessable } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';
import { selectOpenPromises, selectPenetration, selectResolvedPromises, selectSummaryCounts, type PenetrationSqlRow } from './stats.repository';

/** Final dispositions of attempts that reached nobody. */
export const UNREACHED_DISPOSITIONS = ['failed', 'rejected', 'busy', 'no_answer', 'canceled', 'not_placed', 'reaped'];

export async function statsSummary(deps: AppDeps, tenantId: string, now = new Date()) {
  const day = now.toISOString().slice(0, 10);
  const row = await withTenantSql(deps.db, tenantId, (sql) => selectSummaryCounts(sql, day));
  const calls = Number(row.calls);
  const connected = Number(row.connected);
  return {
    date: day,
    window: 'utc_day' as const,
    calls_today: calls,
    connected_today: connected,
    connect_rate: calls === 0 ? null : connected / calls,
    agents_online: Number(row.online),
    agents_available: Number(row.available),
    campaigns_running: Number(row.running),
  };
}

export async function promiseStats(deps: AppDeps, tenantId: string, now = new Date()) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const open = await selectOpenPromises(sql);
    const resolved = await selectResolvedPromises(sql, now);
    const kept = Number(resolved.kept);
    const broken = Number(resolved.broken);
    return {
      open: {
        count: open.reduce((n, r) => n + Number(r.count), 0),
        amount_cents: Object.fromEntries(open.map((r) => [r.currency, Number(r.cents)])),
      },
      kept_rate_30d: kept + broken === 0 ? null : kept / (kept + broken),
      window_days: 30 as const,
    };
  });
}

/** The query schema has checked each form (uuids, at most 100); only their absence is left, a rule across two parameters. */
export function parseCampaignIds(campaignIds?: string, campaignId?: string): string[] {
  const raw = campaignIds ?? campaignId;
  if (raw === undefined) throw unprocessable("campaign_ids is required (or campaign_id for a single campaign)");
  return [...new Set(raw.split(',').map((s) => s.trim().toLowerCase()))];
}

const pct = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10000) / 100);

/**
 * Penetration of campaigns' debts: each debt counts once per row. attempted = at least one original
 * attempt in the window; reached = an attempt whose final disposition (latest correction) reached
 * someone, or a conversation in the window; effective_contact = answered by a person or a
 * conversation in the window.
 */
export async function penetration(deps: AppDeps, tenantId: string, ids: string[], from?: string, to?: string) {
  const start = from ? new Date(from) : new Date(0);
  const end = to ? new Date(to) : new Date();
  if (start > end) throw unprocessable("'from' is after 'to'");
  const rows = await withTenantSql(deps.db, tenantId, (sql) => selectPenetration(sql, ids, start, end, UNREACHED_DISPOSITIONS));
  const shape = (campaignId: string | null, r?: PenetrationSqlRow) => {
    const accounts = Number(r?.unique_accounts ?? 0);
    const attempted = Number(r?.attempted ?? 0);
    const reached = Number(r?.reached ?? 0);
    const effective = Number(r?.effective_contact ?? 0);
    return {
      campaign_id: campaignId,
      unique_accounts: accounts,
      unique_consumers: Number(r?.unique_consumers ?? 0),
      attempted,
      reached,
      effective_contact: effective,
      attempted_pct: pct(attempted, accounts),
      reached_pct: pct(reached, accounts),
      effective_contact_pct: pct(effective, accounts),
    };
  };
  const byCampaign = new Map(rows.filter((r) => r.campaign_id !== null).map((r) => [r.campaign_id!, r]));
  // The totals row counts consumers across campaigns once, so it is not the sum of the rows.
  const totals = rows.find((r) => r.campaign_id === null);
  return { totals: shape(null, totals), by_campaign: ids.map((id) => shape(id, byCampaign.get(id))) };
}
