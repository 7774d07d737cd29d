import { AppError } from '../../src/lib/errors';
import { checkShiftWindow } from '../../src/modules/planned-shifts/planned-shift.rules';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const now = new Date('2026-11-24T12:00:00.000Z');
const at = (ms: number) => new Date(now.getTime() + ms);

function refusal(startMs: number, endMs: number): string | null {
  try {
    checkShiftWindow(at(startMs), at(endMs), now);
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(422);
    return (err as AppError).message;
  }
}

describe('checkShiftWindow', () => {
  it('accepts a shift under way, one exactly 16 hours long and one starting exactly 366 days ahead', () => {
    expect(refusal(-HOUR, HOUR)).toBeNull();
    expect(refusal(DAY, DAY + 16 * HOUR)).toBeNull();
    expect(refusal(366 * DAY, 366 * DAY + HOUR)).toBeNull();
  });

  it('refuses an empty or reversed window, a longer shift, a start too far ahead and an end in the past', () => {
    expect(refusal(DAY, DAY)).toMatch(/after starts_at/);
    expect(refusal(DAY, DAY - 1)).toMatch(/after starts_at/);
    expect(refusal(DAY, DAY + 16 * HOUR + 1)).toMatch(/16 hours/);
    expect(refusal(366 * DAY + 1, 366 * DAY + HOUR)).toMatch(/366 days/);
    expect(refusal(-2 * HOUR, 0)).toMatch(/past/);
  });
});
