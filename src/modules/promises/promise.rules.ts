/** Promise to pay rules (SPEC "Promise", "Limits": promise date; CONTRACT section 8). Pure. */

export const PROMISE_STATUSES = ['pending', 'kept', 'broken', 'cancelled'] as const;
export type PromiseStatus = (typeof PROMISE_STATUSES)[number];

/** The statuses PATCH may set; every one of them is terminal and reachable from pending only. */
export const PROMISE_RESOLUTIONS = ['kept', 'broken', 'cancelled'] as const;
export type PromiseResolution = (typeof PROMISE_RESOLUTIONS)[number];

export const PROMISE_CURRENCIES = ['MXN', 'USD'] as const;

/** How far out a promised date may be, in days after today (UTC). */
export const MAX_PROMISE_DAYS = 90;

/** Debt states that accept a new promise; a paid, settled, disputed or closed debt does not. */
export const PROMISABLE_DEBT_STATES = ['open', 'in_collection', 'promise_to_pay'] as const;

/** The state a debt returns to when its last pending promise is resolved. */
export const DEBT_STATE_AFTER_PROMISES = 'in_collection';

const DAY_MS = 86_400_000;

/** Today's date in UTC, YYYY-MM-DD. */
export function utcDate(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** `date` (YYYY-MM-DD) plus `days` calendar days. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * Why a promised date is refused, or null when it is accepted: it must be after today (UTC) and at
 * most MAX_PROMISE_DAYS days after it. `promisedDate` is an already validated YYYY-MM-DD.
 */
export function promisedDateError(promisedDate: string, now: Date): string | null {
  const today = utcDate(now);
  if (promisedDate <= today) return `promise.promised_date must be in the future (after ${today}, UTC)`;
  const latest = addDays(today, MAX_PROMISE_DAYS);
  if (promisedDate > latest) return `promise.promised_date must be at most ${MAX_PROMISE_DAYS} days out (on or before ${latest}, UTC)`;
  return null;
}

/** Whether a promise in `from` may move to `to` (pending to kept, broken or cancelled; nothing else). */
export function canResolvePromise(from: string, to: PromiseResolution): boolean {
  return from === 'pending' && (PROMISE_RESOLUTIONS as readonly string[]).includes(to);
}

export function isPromisableDebtState(state: string): boolean {
  return (PROMISABLE_DEBT_STATES as readonly string[]).includes(state);
}
