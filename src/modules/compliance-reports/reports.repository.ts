import type { SqlTx } from '../../lib/tenancy';
import { GATE_CHAIN } from '../compliance/compliance.types';

export interface ReportSqlRow {
  kind: 'gate' | 'debts' | 'row';
  gate: string | null;
  day: string | null;
  campaign_id: string | null;
  debt_id: string | null;
  external_ref: string | null;
  row_count: string | null;
  refusals: string | null;
  first_decision_id: string | null;
  last_decision_id: string | null;
  first_at: string | null;
  last_at: string | null;
}

const TS = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/**
 * One statement, so the totals and the listed rows come from one snapshot: per-gate aggregates
 * over every matching refusal row, the distinct debt count, then the rows themselves (at most
 * $4, in day, chain-order gate, external_ref order).
 */
const REPORT_SQL = `
WITH matched AS (
  SELECT r.day, r.gate, r.campaign_id, r.debt_id, r.refusals, r.first_decision_id, r.last_decision_id, r.first_at, r.last_at
    FROM compliance_refusals r
   WHERE r.tenant_id = app_tenant_id()
     AND r.day BETWEEN $1::date AND $2::date
     AND ($3::uuid IS NULL OR r.campaign_id = $3::uuid)
)
SELECT u.* FROM (
  SELECT 'gate' AS kind, g.gate, NULL::text AS day, NULL::text AS campaign_id, NULL::text AS debt_id, NULL::text AS external_ref,
         g.row_count::text AS row_count, g.refused::text AS refusals, NULL::text AS first_decision_id, NULL::text AS last_decision_id,
         NULL::text AS first_at, NULL::text AS last_at, NULL::bigint AS ord
    FROM (SELECT gate, count(*) AS row_count, sum(refusals) AS refused FROM matched GROUP BY gate) g
  UNION ALL
  SELECT 'debts', NULL, NULL, NULL, NULL, NULL, count(DISTINCT debt_id)::text, NULL, NULL, NULL, NULL, NULL, NULL FROM matched
  UNION ALL
  (SELECT 'row', m.gate, to_char(m.day, 'YYYY-MM-DD'), m.campaign_id::text, m.debt_id::text, d.external_ref,
          NULL, m.refusals::text, m.first_decision_id::text, m.last_decision_id::text,
          to_char(m.first_at AT TIME ZONE 'UTC', ${TS}), to_char(m.last_at AT TIME ZONE 'UTC', ${TS}),
          row_number() OVER (ORDER BY m.day, array_position($5::text[], m.gate), d.external_ref COLLATE "C", m.debt_id, m.campaign_id NULLS FIRST)
     FROM matched m JOIN debts d ON d.id = m.debt_id
    ORDER BY 13
    LIMIT $4)
) u
ORDER BY u.ord NULLS FIRST`;

/** The violations report's rows; `limit` caps the listed rows, never the totals and per-gate aggregates. */
export function selectViolations(sql: SqlTx, firstDay: string, lastDay: string, campaignId: string | null, limit: number): Promise<ReportSqlRow[]> {
  return sql.query<ReportSqlRow>(REPORT_SQL, [firstDay, lastDay, campaignId, limit, GATE_CHAIN]);
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

/** Refusal rows counted per UTC date of [firstDay, lastDay] and gate; a date without refusals has an empty by_gate. */
export function selectBlockedByDay(sql: SqlTx, firstDay: string, lastDay: string, campaignId: string | null): Promise<{ day: string; by_gate: Record<string, number> }[]> {
  return sql.query<{ day: string; by_gate: Record<string, number> }>(BLOCKED_SQL, [firstDay, lastDay, campaignId]);
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

export function selectAbandonment(sql: SqlTx, from: Date, to: Date, campaignId: string | null): Promise<{ campaign_id: string; connected: number; abandoned: number }[]> {
  return sql.query<{ campaign_id: string; connected: number; abandoned: number }>(ABANDONMENT_SQL, [from, to, campaignId]);
}
