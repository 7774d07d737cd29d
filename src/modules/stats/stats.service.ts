import type { AppDeps } from '../../deps';
import { unprocessable } from '../../lib/errors';
import { withTenantSql } from '../../lib/tenancy';

/** Final dispositions of attempts that reached nobody. */
export const UNREACHED_DISPOSITIONS = ['failed', 'rejected', 'busy', 'no_answer', 'canceled', 'not_placed', 'reaped'];

export async function statsSummary(deps: AppDeps, tenantId: string, now = new Date()) {
  const day = now.toISOString().slice(0, 10);
  const [row] = await withTenantSql(deps.db, tenantId, (sql) =>
    sql.query<{ calls: string; connected: string; online: string; available: string; running: string }>(
      `SELECT
         (SELECT count(*) FROM call_attempts a
           WHERE a.corrects_id IS NULL AND coalesce(a.started_at, a.inserted_at) >= $1::date
             AND coalesce(a.started_at, a.inserted_at) < $1::date + 1 AND coalesce(a.disposition, '') <> 'not_placed') AS calls,
         (SELECT count(*) FROM call_attempts a
           WHERE a.corrects_id IS NULL AND coalesce(a.started_at, a.inserted_at) >= $1::date
             AND coalesce(a.started_at, a.inserted_at) < $1::date + 1 AND a.answered_at IS NOT NULL
             AND coalesce(a.amd_verdict, 'human') = 'human') AS connected,
         (SELECT count(*) FROM agents WHERE presence <> 'offline') AS online,
         (SELECT count(*) FROM agents WHERE presence = 'available') AS available,
         (SELECT count(*) FROM campaigns WHERE state = 'running') AS running`,
      [day],
    ),
  );
  const calls = Number(row!.calls);
  const connected = Number(row!.connected);
  return {
    date: day,
    window: 'utc_day' as const,
    calls_today: calls,
    connected_today: connected,
    connect_rate: calls === 0 ? null : connected / calls,
    agents_online: Number(row!.online),
    agents_available: Number(row!.available),
    campaigns_running: Number(row!.running),
  };
}

export async function promiseStats(deps: AppDeps, tenantId: string, now = new Date()) {
  return withTenantSql(deps.db, tenantId, async (sql) => {
    const open = await sql.query<{ currency: string; count: string; cents: string }>(
      `SELECT currency, count(*) AS count, sum(amount_cents) AS cents FROM promises WHERE status = 'pending' GROUP BY currency ORDER BY currency`,
    );
    const [resolved] = await sql.query<{ kept: string; broken: string }>(
      `SELECT count(*) FILTER (WHERE status = 'kept') AS kept, count(*) FILTER (WHERE status = 'broken') AS broken
         FROM promises WHERE promised_date > ($1::timestamptz AT TIME ZONE 'UTC')::date - 30 AND promised_date <= ($1::timestamptz AT TIME ZONE 'UTC')::date`,
      [now.toISOString()],
    );
    const kept = Number(resolved!.kept);
    const broken = Number(resolved!.broken);
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

interface PenetrationSqlRow {
  campaign_id: string | null;
  unique_accounts: string;
  unique_consumers: string;
  attempted: string;
  reached: string;
  effective_contact: string;
}

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
  const rows = await withTenantSql(deps.db, tenantId, (sql) =>
    sql.query<PenetrationSqlRow>(
      `WITH d AS (
         SELECT id, campaign_id, consumer_ref, last_conversation_at FROM debts WHERE campaign_id = ANY ($1::uuid[])
       ),
       attempts AS (
         SELECT a.debt_id, a.answered_at, a.amd_verdict,
                coalesce((SELECT c.disposition FROM call_attempts c WHERE c.corrects_id = a.id ORDER BY c.inserted_at DESC, c.id DESC LIMIT 1), a.disposition) AS final
           FROM call_attempts a
          WHERE a.corrects_id IS NULL AND a.debt_id IN (SELECT id FROM d)
            AND coalesce(a.started_at, a.inserted_at) >= $2 AND coalesce(a.started_at, a.inserted_at) < $3
            AND coalesce(a.disposition, '') <> 'not_placed'
       ),
       per_debt AS (
         SELECT d.id, d.campaign_id, d.consumer_ref,
                EXISTS (SELECT 1 FROM attempts x WHERE x.debt_id = d.id) AS attempted,
                EXISTS (SELECT 1 FROM attempts x WHERE x.debt_id = d.id AND x.final IS NOT NULL AND x.final <> ALL ($4::text[]))
                  OR (d.last_conversation_at >= $2 AND d.last_conversation_at < $3) AS reached,
                EXISTS (SELECT 1 FROM attempts x WHERE x.debt_id = d.id
                         AND (x.final = 'answered_human' OR (x.answered_at IS NOT NULL AND x.amd_verdict = 'human')))
                  OR (d.last_conversation_at >= $2 AND d.last_conversation_at < $3) AS effective
           FROM d
       )
       SELECT campaign_id::text, count(*) AS unique_accounts, count(DISTINCT consumer_ref) AS unique_consumers,
              count(*) FILTER (WHERE attempted) AS attempted, count(*) FILTER (WHERE reached) AS reached,
              count(*) FILTER (WHERE effective) AS effective_contact
         FROM per_debt GROUP BY GROUPING SETS ((campaign_id), ())`,
      [ids, start, end, UNREACHED_DISPOSITIONS],
    ),
  );
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
