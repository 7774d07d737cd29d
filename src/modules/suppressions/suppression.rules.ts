import { normalizeToE164 } from '../../lib/phone';
import { type CsvDataRow, Rejections, type RejectedRow } from '../../lib/csv-import';

/** SPEC "Limits": a suppression reason is at most 200 characters. */
export const MAX_REASON_CHARS = 200;

export type SuppressionRejectReason = 'not_e164' | 'duplicate';

export interface SuppressionPlan {
  /** Data rows in the file (header, blank and comment lines excluded). */
  received: number;
  /** One entry per distinct valid number, in file order, with the reason of its first row. */
  accepted: { phone: string; reason: string | null }[];
  rejected_count: number;
  rejected: RejectedRow<SuppressionRejectReason>[];
  /** Accepted rows whose reason was longer than MAX_REASON_CHARS and was cut. */
  reasons_truncated: number;
}

/**
 * A reason as stored: control characters (line breaks of a quoted field included) become spaces,
 * runs of whitespace collapse, the ends are trimmed; empty is null; longer than MAX_REASON_CHARS
 * characters (code points) is cut to that length.
 */
export function cleanReason(raw: string | undefined): { reason: string | null; truncated: boolean } {
  // eslint-disable-next-line no-control-regex
  const text = (raw ?? '').replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').replace(/\s+/g, ' ').trim();
  if (text === '') return { reason: null, truncated: false };
  const chars = Array.from(text);
  if (chars.length <= MAX_REASON_CHARS) return { reason: text, truncated: false };
  return { reason: chars.slice(0, MAX_REASON_CHARS).join('').trimEnd(), truncated: true };
}

/**
 * Rows are `number[,reason]` (columns after the second are ignored). A number is kept in E.164 or
 * normalized from a bare 10-digit / 1+10-digit NANP number; anything else is `not_e164`. A number
 * that already appeared earlier in the file is `duplicate`.
 */
export function planSuppressionImport(rows: readonly CsvDataRow[]): SuppressionPlan {
  const rejections = new Rejections<SuppressionRejectReason>();
  const seen = new Set<string>();
  const accepted: SuppressionPlan['accepted'] = [];
  let truncated = 0;
  for (const { line, cells } of rows) {
    const raw = cells[0] ?? '';
    const phone = normalizeToE164(raw);
    if (!phone) {
      rejections.add(line, raw, 'not_e164');
      continue;
    }
    if (seen.has(phone)) {
      rejections.add(line, raw, 'duplicate');
      continue;
    }
    seen.add(phone);
    const { reason, truncated: cut } = cleanReason(cells[1]);
    if (cut) truncated += 1;
    accepted.push({ phone, reason });
  }
  return {
    received: rows.length,
    accepted,
    rejected_count: rejections.count,
    rejected: rejections.listed,
    reasons_truncated: truncated,
  };
}
