import {
  availableOf,
  billedSeats,
  blockReason,
  didPacks,
  drawDown,
  lineItems,
  monthWindow,
  parseAmountInput,
  reachedThresholds,
  subtotalOf,
  toMicros,
  usd,
  usedPct,
} from '../../src/modules/billing/billing.rules';

const m = toMicros;

describe('billing money arithmetic', () => {
  it('reads numeric text exactly and renders 4 places half up', () => {
    expect(m('0.1') + m('0.2')).toBe(m('0.3'));
    expect(usd(m('0.0079') * 3n)).toBe('0.0237');
    expect(usd(m('0.000050'))).toBe('0.0001');
    expect(usd(m('0.000049'))).toBe('0.0000');
    expect(usd(m('12'))).toBe('12.0000');
    expect(usd(-m('1.5'))).toBe('-1.5000');
    expect(m('1.0000005')).toBe(1_000_001n);
  });

  it('accepts operator amounts with at most 4 places and 10 integer digits', () => {
    expect(parseAmountInput('100.25')).toBe(100_250_000n);
    expect(parseAmountInput(19.99)).toBe(19_990_000n);
    expect(parseAmountInput(0)).toBe(0n);
    for (const bad of ['1.23456', '-5', 'abc', '', '12345678901', 1e21, Number.NaN, '1e3']) expect(parseAmountInput(bad)).toBeNull();
  });

  it('floors used_pct to one decimal and is null without a positive limit', () => {
    expect(usedPct(m('3.3333'), m('10'))).toBe(33.3);
    expect(usedPct(m('8.5'), m('10'))).toBe(85);
    expect(usedPct(m('9.9999'), m('10'))).toBe(99.9);
    expect(usedPct(m('12'), m('10'))).toBe(120);
    expect(usedPct(m('1'), m('0'))).toBeNull();
    expect(usedPct(m('1'), null)).toBeNull();
  });

  it('reaches a threshold exactly at limit × pct / 100', () => {
    expect(reachedThresholds([100, 50, 80], m('7.9999'), m('10'))).toEqual([50]);
    expect(reachedThresholds([100, 50, 80], m('8'), m('10'))).toEqual([50, 80]);
    expect(reachedThresholds([50, 50, 100], m('10'), m('10'))).toEqual([50, 100]);
    expect(reachedThresholds([50], m('10'), m('0'))).toEqual([]);
  });
});

describe('balances and blocks', () => {
  it('available = cash + grant + credit limit − open holds (the deposit is not spendable)', () => {
    expect(usd(availableOf({ cash: m('10'), grant: m('5'), deposit: m('100'), creditLimit: m('20'), openHolds: m('7.5') }))).toBe('27.5000');
  });

  it('prepaid usage draws the grant first, then cash; other schemes keep credits as credited', () => {
    expect(drawDown('prepaid', { cash: m('10'), grant: m('5') }, m('3'))).toEqual({ cash: m('10'), grant: m('2') });
    expect(drawDown('prepaid', { cash: m('10'), grant: m('5') }, m('17'))).toEqual({ cash: m('-2'), grant: 0n });
    expect(drawDown('postpaid', { cash: m('10'), grant: m('5') }, m('17'))).toEqual({ cash: m('10'), grant: m('5') });
  });

  it('blocks at the cap for every scheme and on exhausted funds for prepaid only', () => {
    expect(blockReason('postpaid', m('10'), m('10'), m('1'))).toBe('cap_reached');
    expect(blockReason('postpaid', m('9.9999'), m('10'), m('-1'))).toBeNull();
    expect(blockReason('prepaid', m('1'), null, 0n)).toBe('funds_exhausted');
    expect(blockReason('prepaid', m('1'), m('0'), m('0.0001'))).toBeNull();
    expect(blockReason(null, m('100'), m('1'), 0n)).toBeNull();
  });
});

describe('invoice lines', () => {
  it('bills at least 3 seats and DID packs of 10 beyond 10 included', () => {
    expect([0, 1, 3, 7].map(billedSeats)).toEqual([3, 3, 3, 7]);
    expect([0, 10, 11, 20, 21, 23].map(didPacks)).toEqual([0, 0, 1, 1, 2, 2]);
  });

  it('computes a hand-checked month', () => {
    const items = lineItems(
      { seats: 2, houseDids: 23, customerDids: 11, answeredMinutes: 5, inboundMinutes: 4, smsSegments: 5, smsCost: m('0.0395'), aiCalls: 2, aiCost: m('12.5'), voiceAiEnabled: true, wavFiles: 7 },
      true,
    );
    expect(items.map((i) => [i.kind, i.quantity, i.unit_price_usd, i.amount_usd])).toEqual([
      ['seats', 3, '99.0000', '297.0000'],
      ['voice_ai', 2, null, '200.0000'],
      ['house_minutes', 5, '0.0150', '0.0750'],
      ['inbound_minutes', 4, '0.0100', '0.0400'],
      ['did_rent', 23, '1.0000', '23.0000'],
      ['did_overage', 2, '25.0000', '50.0000'],
      ['did_overage_customer', 1, '25.0000', '25.0000'],
      ['sms', 5, null, '0.0395'],
      ['wav_surcharge', 7, '0.0100', '0.0700'],
    ]);
    expect(usd(subtotalOf(items))).toBe('595.2245');
  });

  it('voice AI: max(metered, 200) while on, metered without the minimum on a summary, 0 while off', () => {
    const base = { seats: 3, houseDids: 0, customerDids: 0, answeredMinutes: 0, inboundMinutes: 0, smsSegments: 0, smsCost: 0n, aiCalls: 9, aiCost: m('250.1234'), wavFiles: 0 };
    const ai = (enabled: boolean, minimums: boolean, cost = base.aiCost) =>
      lineItems({ ...base, aiCost: cost, voiceAiEnabled: enabled }, minimums).find((i) => i.kind === 'voice_ai')!.amount_usd;
    expect(ai(true, true)).toBe('250.1234');
    expect(ai(true, true, m('1'))).toBe('200.0000');
    expect(ai(true, false, m('1'))).toBe('1.0000');
    expect(ai(false, true)).toBe('0.0000');
  });

  it('reads a calendar month as a half-open UTC window', () => {
    expect(monthWindow('2026-12')).toEqual({ from: new Date('2026-12-01T00:00:00Z'), to: new Date('2027-01-01T00:00:00Z') });
    expect(monthWindow('2026-13')).toBeNull();
    expect(monthWindow('2026-1')).toBeNull();
  });
});
