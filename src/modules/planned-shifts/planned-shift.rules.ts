import { unprocessable } from '../../lib/errors';

export const PLANNED_SHIFT_STATUSES = ['scheduled', 'cancelled'] as const;
export type PlannedShiftStatus = (typeof PLANNED_SHIFT_STATUSES)[number];

/** Longest shift: a double shift is the most a seat is planned for in one go. */
export const MAX_SHIFT_HOURS = 16;
/** How far ahead a shift may start: a year's rota plus a leap day. */
export const MAX_DAYS_AHEAD = 366;
export const MAX_SHIFT_NOTE = 500;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Refuses (422) a shift window that cannot be planned at `now`. */
export function checkShiftWindow(startsAt: Date, endsAt: Date, now: Date): void {
  if (endsAt.getTime() <= startsAt.getTime()) throw unprocessable('ends_at must be after starts_at');
  if (endsAt.getTime() - startsAt.getTime() > MAX_SHIFT_HOURS * HOUR_MS) throw unprocessable(`a shift lasts at most ${MAX_SHIFT_HOURS} hours`);
  if (startsAt.getTime() > now.getTime() + MAX_DAYS_AHEAD * DAY_MS) throw unprocessable(`a shift starts at most ${MAX_DAYS_AHEAD} days ahead`);
  if (endsAt.getTime() <= now.getTime()) throw unprocessable('ends_at is in the past');
}
