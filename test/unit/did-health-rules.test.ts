import { AppError } from '../../src/lib/errors';
import { healthPeriod, rate } from '../../src/modules/dids/did-health.rules';

describe('DID health rules', () => {
  const now = new Date('2026-03-10T12:00:00.000Z');

  it('defaults to the 30 days ending now', () => {
    expect(healthPeriod({}, now)).toEqual({ from: new Date('2026-02-08T12:00:00.000Z'), to: now });
  });

  it('from alone ends now; to alone starts 30 days before it', () => {
    expect(healthPeriod({ from: '2026-03-01T00:00:00Z' }, now)).toEqual({ from: new Date('2026-03-01T00:00:00Z'), to: now });
    expect(healthPeriod({ to: '2026-01-31T00:00:00+02:00' }, now)).toEqual({ from: new Date('2025-12-31T22:00:00Z'), to: new Date('2026-01-30T22:00:00Z') });
  });

  it('from at or after to is 422 unprocessable (a rule across two parameters)', () => {
    for (const query of [{ from: '2026-03-10T12:00:00Z' }, { from: '2026-03-11T00:00:00Z' }, { from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }]) {
      expect(() => healthPeriod(query, now)).toThrow(AppError);
      try {
        healthPeriod(query, now);
      } catch (err) {
        expect((err as AppError).code).toBe('unprocessable');
      }
    }
  });

  it('rate: null without a denominator, else the plain share', () => {
    expect(rate(0, 0)).toBeNull();
    expect(rate(0, 4)).toBe(0);
    expect(rate(2, 5)).toBe(0.4);
    expect(rate(5, 6)).toBe(5 / 6);
  });
});
