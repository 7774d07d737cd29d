import { badRequest, unprocessable } from '../../lib/errors';

export const DEFAULT_WINDOW_DAYS = 30;
/** Longest window the stats and the report answer, in UTC dates. */
export const MAX_WINDOW_DAYS = 366;

const DAY_MS = 24 * 3600_000;

export interface ReportWindow {
  from: Date;
  to: Date;
  /** The UTC dates (YYYY-MM-DD) whose day overlaps [from, to), oldest first; empty when from = to. */
  days: string[];
}

const utcDate = (at: Date): string => at.toISOString().slice(0, 10);
const startOfUtcDay = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));

function parseInstant(name: string, value: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw badRequest(`field '${name}': invalid RFC 3339 date-time`);
  return at;
}

/**
 * The half-open window [from, to) of a stats or report query. Refusal evidence is kept per UTC
 * day, so the window selects the UTC dates it overlaps. Defaults: `to` is now; `from` is 00:00Z of
 * the UTC date 29 days before the last date of the window, so the default covers 30 UTC dates
 * ending with the one `to` falls in (today).
 */
export function resolveWindow(query: { from?: string; to?: string }, now: Date): ReportWindow {
  const to = query.to === undefined ? now : parseInstant('to', query.to);
  const lastInstant = new Date(to.getTime() - 1);
  const from =
    query.from === undefined
      ? new Date(startOfUtcDay(lastInstant).getTime() - (DEFAULT_WINDOW_DAYS - 1) * DAY_MS)
      : parseInstant('from', query.from);
  // Cross-field rules no JSON Schema can state: the shape is fine, the window is not (SPEC: 422 unprocessable).
  if (from.getTime() > to.getTime()) throw unprocessable("'from' must not be after 'to'");
  const days: string[] = [];
  if (from.getTime() < to.getTime()) {
    const first = startOfUtcDay(from).getTime();
    const last = startOfUtcDay(lastInstant).getTime();
    const count = Math.round((last - first) / DAY_MS) + 1;
    if (count > MAX_WINDOW_DAYS) throw unprocessable(`'from' and 'to' span ${count} UTC days; at most ${MAX_WINDOW_DAYS} are allowed`);
    for (let day = first; day <= last; day += DAY_MS) days.push(utcDate(new Date(day)));
  }
  return { from, to, days };
}
