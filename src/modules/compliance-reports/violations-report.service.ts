import type { AppDeps } from '../../deps';
import { withTenantSql } from '../../lib/tenancy';
import { RULES_VERSION } from '../compliance/compliance.rules';
import { GATE_CHAIN, type Gate } from '../compliance/compliance.types';
import { csvLine } from './artifact';
import { selectViolations } from './reports.repository';
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
    firstDay === null ? [] : await withTenantSql(deps.db, tenantId, (sql) => selectViolations(sql, firstDay, lastDay!, campaignId, rowLimit + 1));

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
