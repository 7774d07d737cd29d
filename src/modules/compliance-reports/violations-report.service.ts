import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { RULES_VERSION } from '../compliance/compliance.rules';
import { GATE_CHAIN, type Gate } from '../compliance/compliance.types';
import { csvLine } from './artifact';
import { GATE_BASIS } from './gate-basis';
import { resolveWindow } from './report-window';

/** Most evidence rows one report lists; totals and by_gate always cover every row. */
export const REPORT_ROW_LIMIT = 50_000;
export const REPORT_VERSION = 1;

export interface ViolationsReportQuery {
  from?: string;
  to?: string;
  campaign_id?: string;
}

export interface ViolationRow {
  day: string;
  gate: Gate;
  campaign_id: string | null;
  debt_id: string;
  external_ref: string;
  refusals: number;
  first_decision_id: string;
  last_decision_id: string;
  first_at: string;
  last_at: string;
}

export interface ViolationsReport {
  report: 'violations_prevented';
  report_version: number;
  generated_at: string;
  tenant_id: string;
  period: { from: string; to: string; first_day: string | null; last_day: string | null; days: number };
  campaign_id: string | null;
  rules_version: string;
  totals: { refusals: number; refused_attempts: number; debts: number };
  by_gate: { gate: Gate; rows: number; refused_attempts: number; description: string; citations: string[] }[];
  row_limit: number;
  truncated: boolean;
  rows: ViolationRow[];
}

export const CSV_COLUMNS = [
  'day',
  'gate',
  'campaign_id',
  'debt_id',
  'external_ref',
  'refusals',
  'first_decision_id',
  'last_decision_id',
  'first_at',
  'last_at',
] as const satisfies readonly (keyof ViolationRow)[];

interface ReportSqlRow {
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

export async function violationsReport(
  deps: Pick<AppDeps, 'db'>,
  tenantId: string,
  query: ViolationsReportQuery,
  now = new Date(),
  rowLimit = REPORT_ROW_LIMIT,
): Promise<ViolationsReport> {
  const window = resolveWindow(query, now);
  const campaignId = query.campaign_id?.toLowerCase() ?? null;
  const firstDay = window.days[0] ?? null;
  const lastDay = window.days[window.days.length - 1] ?? null;
  const result =
    firstDay === null
      ? []
      : await withTenantSql(deps.db, tenantId, (sql) =>
          sql.query<ReportSqlRow>(REPORT_SQL, [firstDay, lastDay, campaignId, rowLimit + 1, GATE_CHAIN]),
        );

  const perGate = new Map<string, { rows: number; refused: number }>();
  let debts = 0;
  const rows: ViolationRow[] = [];
  for (const r of result) {
    if (r.kind === 'gate') perGate.set(r.gate!, { rows: Number(r.row_count), refused: Number(r.refusals) });
    else if (r.kind === 'debts') debts = Number(r.row_count);
    else
      rows.push({
        day: r.day!,
        gate: r.gate as Gate,
        campaign_id: r.campaign_id,
        debt_id: r.debt_id!,
        external_ref: r.external_ref!,
        refusals: Number(r.refusals),
        first_decision_id: r.first_decision_id!,
        last_decision_id: r.last_decision_id!,
        first_at: r.first_at!,
        last_at: r.last_at!,
      });
  }
  const truncated = rows.length > rowLimit;
  if (truncated) rows.length = rowLimit;
  const byGate = GATE_CHAIN.map((gate) => ({
    gate,
    rows: perGate.get(gate)?.rows ?? 0,
    refused_attempts: perGate.get(gate)?.refused ?? 0,
    description: GATE_BASIS[gate].description,
    citations: GATE_BASIS[gate].citations,
  }));
  return {
    report: 'violations_prevented',
    report_version: REPORT_VERSION,
    generated_at: now.toISOString(),
    tenant_id: tenantId,
    period: { from: window.from.toISOString(), to: window.to.toISOString(), first_day: firstDay, last_day: lastDay, days: window.days.length },
    campaign_id: campaignId,
    rules_version: RULES_VERSION,
    totals: {
      refusals: byGate.reduce((sum, g) => sum + g.rows, 0),
      refused_attempts: byGate.reduce((sum, g) => sum + g.refused_attempts, 0),
      debts,
    },
    by_gate: byGate,
    row_limit: rowLimit,
    truncated,
    rows,
  };
}

/** The CSV form: a header, then one CRLF-terminated line per listed row, in the JSON order. */
export function violationsCsv(report: ViolationsReport): string {
  return csvLine([...CSV_COLUMNS]) + report.rows.map((row) => csvLine(CSV_COLUMNS.map((c) => row[c]))).join('');
}

export function violationsCsvFilename(report: ViolationsReport): string {
  const span = report.period.first_day ? `${report.period.first_day}_${report.period.last_day}` : 'empty';
  return `violations-prevented_${span}.csv`;
}
