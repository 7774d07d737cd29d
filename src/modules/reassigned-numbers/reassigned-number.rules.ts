import { normalizeToE164 } from '../../lib/phone';
import { type CsvDataRow, Rejections, type RejectedRow } from '../../lib/csv-import';

export type ReassignedRejectReason = 'not_e164' | 'bad_date' | 'duplicate';

/** Header names of the date column (documentation; the header is recognized by its first cell). */
export const DATE_HEADER_NAMES = ['disconnected_on', 'disconnect_date'] as const;

/** Dates before this are data errors, not disconnections. */
export const EARLIEST_DISCONNECTION = '1900-01-01';

export interface ReassignedPlan {
  received: number;
  /** One entry per distinct (number, date), in file order. */
  accepted: { phone: string; disconnectedOn: string }[];
  rejected_count: number;
  rejected: RejectedRow<ReassignedRejectReason>[];
}

/** Today's date in UTC as YYYY-MM-DD (the latest date any US time zone can be on). */
export function utcToday(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/**
 * A permanent-disconnection date: YYYY-MM-DD, a real calendar date, from EARLIEST_DISCONNECTION to
 * `today` inclusive. Null otherwise.
 */
export function parseDisconnectionDate(raw: string | undefined, today: string): string | null {
  const value = (raw ?? '').trim();
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return null;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) return null;
  if (value < EARLIEST_DISCONNECTION || value > today) return null;
  return value;
}

/**
 * Rows are `number,disconnected_on` (columns after the second are ignored). The number is
 * normalized like a suppression (`not_e164` otherwise); the date must be a past or present
 * YYYY-MM-DD (`bad_date` otherwise, a missing one included); the same number with the same date
 * earlier in the file is `duplicate`. A number may carry several dates (each disconnection is kept).
 */
export function planReassignedImport(rows: readonly CsvDataRow[], today: string): ReassignedPlan {
  const rejections = new Rejections<ReassignedRejectReason>();
  const seen = new Set<string>();
  const accepted: ReassignedPlan['accepted'] = [];
  for (const { line, cells } of rows) {
    const raw = cells[0] ?? '';
    const phone = normalizeToE164(raw);
    if (!phone) {
      rejections.add(line, raw, 'not_e164');
      continue;
    }
    const disconnectedOn = parseDisconnectionDate(cells[1], today);
    if (!disconnectedOn) {
      rejections.add(line, raw, 'bad_date');
      continue;
    }
    const key = `${phone} ${disconnectedOn}`;
    if (seen.has(key)) {
      rejections.add(line, raw, 'duplicate');
      continue;
    }
    seen.add(key);
    accepted.push({ phone, disconnectedOn });
  }
  return { received: rows.length, accepted, rejected_count: rejections.count, rejected: rejections.listed };
}
