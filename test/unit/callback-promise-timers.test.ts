import { ApplicationFailure } from '@temporalio/common';
import { loadConfig } from '../../src/config';
import { promiseDeadlineMs } from '../../workflows/promise.workflow';

describe('promiseDeadlineMs', () => {
  it('is the day after the promised date at 12:00 UTC: midnight at UTC-12, the last zone to leave the day', () => {
    expect(new Date(promiseDeadlineMs('2026-11-24')).toISOString()).toBe('2026-11-25T12:00:00.000Z');
  });

  it('is still the promised day at UTC-12 one millisecond earlier, and already the next day at UTC+14 long before', () => {
    const deadline = promiseDeadlineMs('2026-11-24');
    const inZone = (ms: number, offsetHours: number) => new Date(ms + offsetHours * 3_600_000).toISOString().slice(0, 10);
    expect(inZone(deadline - 1, -12)).toBe('2026-11-24');
    expect(inZone(deadline, -12)).toBe('2026-11-25');
    expect(inZone(deadline - 24 * 3_600_000, 14)).toBe('2026-11-25');
  });

  it('crosses month, year and leap-day boundaries', () => {
    expect(new Date(promiseDeadlineMs('2026-12-31')).toISOString()).toBe('2027-01-01T12:00:00.000Z');
    expect(new Date(promiseDeadlineMs('2028-02-28')).toISOString()).toBe('2028-02-29T12:00:00.000Z');
    expect(new Date(promiseDeadlineMs('2028-02-29')).toISOString()).toBe('2028-03-01T12:00:00.000Z');
    expect(new Date(promiseDeadlineMs('2027-02-28')).toISOString()).toBe('2027-03-01T12:00:00.000Z');
  });

  it.each(['2026-02-30', '2026-13-01', '2026-1-01', '20261124', '2026-11-24T00:00:00Z', ''])(
    'refuses %p with a non-retryable InvalidPromisedDate failure',
    (value) => {
      let thrown: unknown;
      try {
        promiseDeadlineMs(value);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ApplicationFailure);
      expect(thrown).toMatchObject({ type: 'InvalidPromisedDate', nonRetryable: true });
    },
  );
});

describe('CALLBACK_MISS_AFTER_MS', () => {
  it('defaults to 30 minutes, blank included, and reads a non-negative integer', () => {
    expect(loadConfig({}).CALLBACK_MISS_AFTER_MS).toBe(30 * 60_000);
    expect(loadConfig({ CALLBACK_MISS_AFTER_MS: ' ' }).CALLBACK_MISS_AFTER_MS).toBe(30 * 60_000);
    expect(loadConfig({ CALLBACK_MISS_AFTER_MS: '0' }).CALLBACK_MISS_AFTER_MS).toBe(0);
    expect(loadConfig({ CALLBACK_MISS_AFTER_MS: '600000' }).CALLBACK_MISS_AFTER_MS).toBe(600_000);
  });

  it.each(['-1', '1.5', 'soon'])('refuses %p', (value) => {
    expect(() => loadConfig({ CALLBACK_MISS_AFTER_MS: value })).toThrow(/CALLBACK_MISS_AFTER_MS/);
  });
});
