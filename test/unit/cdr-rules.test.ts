import { bracketQueryKey, dispositionRuleError, PROMISE_TO_PAY } from '../../src/modules/cdr/cdr.rules';
import { addDays, canResolvePromise, isPromisableDebtState, promisedDateError, utcDate } from '../../src/modules/promises/promise.rules';
import { callbackTransition, leadTimeError, MIN_LEAD_MS, quarantineError } from '../../src/modules/callbacks/callback.rules';

// 23:30 UTC: still 2026-11-22 in UTC, already the 23rd east of Greenwich.
const NOW = new Date('2026-11-22T23:30:00Z');

describe('promised date window (UTC days)', () => {
  it('reads today and adds calendar days in UTC', () => {
    expect(utcDate(NOW)).toBe('2026-11-22');
    expect(addDays('2026-11-22', 90)).toBe('2027-02-20');
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
  });

  it.each([
    ['2026-11-21', false],
    ['2026-11-22', false],
    ['2026-11-23', true],
    ['2027-02-20', true],
    ['2027-02-21', false],
  ])('%s accepted: %s', (date, accepted) => {
    expect(promisedDateError(date, NOW) === null).toBe(accepted);
  });

  it('names the bound it broke', () => {
    expect(promisedDateError('2026-11-22', NOW)).toMatch(/future/);
    expect(promisedDateError('2027-03-01', NOW)).toMatch(/90 days/);
  });
});

describe('dispositionRuleError', () => {
  const promise = { promised_date: '2026-12-01' };
  it.each([
    [PROMISE_TO_PAY, promise, null],
    [PROMISE_TO_PAY, undefined, /requires a promise/],
    [PROMISE_TO_PAY, null, /requires a promise/],
    [PROMISE_TO_PAY, { promised_date: '2026-11-22' }, /future/],
    ['wrong_number', promise, /only with disposition promise_to_pay/],
    ['wrong_number', undefined, null],
    ['wrong_number', null, null],
    ['PROMISE_TO_PAY', promise, /only with/],
  ] as const)('%s with %j', (disposition, p, expected) => {
    const error = dispositionRuleError(disposition, p, NOW);
    if (expected === null) expect(error).toBeNull();
    else expect(error).toMatch(expected);
  });
});

describe('bracketQueryKey', () => {
  it('finds the array form of any parameter, and nothing else', () => {
    expect(bracketQueryKey(['disposition[]'])).toBe('disposition[]');
    expect(bracketQueryKey(['limit', 'disposition[0]'])).toBe('disposition[0]');
    expect(bracketQueryKey(['a]'])).toBe('a]');
    expect(bracketQueryKey(['disposition', 'limit', 'cursor'])).toBeNull();
    expect(bracketQueryKey([])).toBeNull();
  });
});

describe('promise transitions and promisable debts', () => {
  it('moves pending only, to kept, broken or cancelled', () => {
    for (const to of ['kept', 'broken', 'cancelled'] as const) {
      expect(canResolvePromise('pending', to)).toBe(true);
      for (const from of ['kept', 'broken', 'cancelled']) expect(canResolvePromise(from, to)).toBe(false);
    }
  });

  it('accepts promises for open, in_collection and promise_to_pay debts only', () => {
    expect(['open', 'in_collection', 'promise_to_pay', 'paid', 'settled', 'disputed', 'closed'].filter(isPromisableDebtState)).toEqual([
      'open',
      'in_collection',
      'promise_to_pay',
    ]);
  });
});

describe('callback rules', () => {
  it('needs at least 10 minutes of lead time', () => {
    expect(leadTimeError(new Date(NOW.getTime() + MIN_LEAD_MS), NOW)).toBeNull();
    expect(leadTimeError(new Date(NOW.getTime() + MIN_LEAD_MS - 1), NOW)).toMatch(/10 minutes/);
    expect(leadTimeError(new Date(NOW.getTime() - 1), NOW)).not.toBeNull();
  });

  it('moves pending only; done, cancelled and missed are terminal', () => {
    expect(callbackTransition('pending', 'complete')).toBe('done');
    expect(callbackTransition('pending', 'cancel')).toBe('cancelled');
    expect(callbackTransition('pending', 'miss')).toBe('missed');
    for (const from of ['done', 'cancelled', 'missed']) {
      for (const verb of ['complete', 'cancel', 'miss'] as const) expect(callbackTransition(from, verb)).toBeNull();
    }
  });

  it('puts a quarantined DID or an active do-not-call listing in quarantine', () => {
    expect(quarantineError({ didQuarantine: false, doNotCall: false })).toBeNull();
    expect(quarantineError({ didQuarantine: true, doNotCall: false })).toMatch(/DID/);
    expect(quarantineError({ didQuarantine: false, doNotCall: true })).toMatch(/do-not-call/);
  });
});
