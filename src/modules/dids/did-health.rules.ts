import { unprocessable } from '../../lib/errors';

/** SPEC Limits: an answered call shorter than this counts as short. */
export const SHORT_CALL_SECONDS = 15;
export const DEFAULT_PERIOD_DAYS = 30;

const DAY_MS = 24 * 3600_000;

/** The half-open period [from, to): `to` defaults to now, `from` to 30 days (of 24 h) before `to`; from ≥ to is 422 (a cross-field rule). */
export function healthPeriod(query: { from?: string; to?: string }, now: Date): { from: Date; to: Date } {
  const to = query.to === undefined ? now : new Date(query.to);
  const from = query.from === undefined ? new Date(to.getTime() - DEFAULT_PERIOD_DAYS * DAY_MS) : new Date(query.from);
  if (from.getTime() >= to.getTime()) throw unprocessable("'from' must be before 'to'");
  return { from, to };
}

/** A share as a JSON number, like connect_rate and kept_rate_30d of the stats; null without a denominator. */
export const rate = (count: number, over: number): number | null => (over === 0 ? null : count / over);
