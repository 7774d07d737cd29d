import { HELD_RECHECK_MS, IDLE_BACKSTOP_MS, nextTick, windowOpensAt, type WakeFacts } from '../../src/modules/dialer/next-wake';

const now = new Date('2026-11-27T12:00:00.000Z');
const at = (ms: number) => new Date(now.getTime() + ms);
const idleTick = (idle: string | null, over: Partial<WakeFacts['tick']> = {}): WakeFacts['tick'] => ({
  state: 'running',
  placed: 0,
  blocked: 0,
  notPlaced: 0,
  inFlight: 0,
  idle,
  ...over,
});
const facts = (tick: WakeFacts['tick'], due: Array<Date | null> = []): WakeFacts => ({ tick, due, now, tickMs: 1000 });

describe('nextTick: when a campaign run ticks again', () => {
  it('keeps the cadence while the run is busy: it dialed, refused, failed to place, calls are in flight or ended after it paced', () => {
    for (const over of [{ placed: 1 }, { blocked: 2 }, { notPlaced: 1 }, { inFlight: 3 }, { unpaced: 1 }]) {
      expect(nextTick(facts(idleTick('no_dialable_leads', over)))).toEqual({ kind: 'cadence' });
    }
    expect(nextTick(facts(idleTick(null)))).toEqual({ kind: 'cadence' });
  });

  it('keeps the cadence for brakes that lift by themselves and for a campaign that is not running', () => {
    for (const idle of ['capacity_full', 'switch_unavailable', 'ai_concurrency_full', 'batch_done', 'tick_budget']) {
      expect(nextTick(facts(idleTick(idle)))).toEqual({ kind: 'cadence' });
    }
    expect(nextTick(facts(idleTick('not_running', { state: 'paused' })))).toEqual({ kind: 'cadence' });
  });

  it('waits for signals only when the loop never dials the campaign (preview, manual)', () => {
    expect(nextTick(facts(idleTick('human_initiated_only')))).toEqual({ kind: 'signal_only', reason: 'human_initiated_only' });
    expect(nextTick(facts(idleTick('type_not_dialed_by_loop')))).toEqual({ kind: 'signal_only', reason: 'type_not_dialed_by_loop' });
  });

  it('sleeps until the earliest due moment, ignoring unknown ones', () => {
    expect(nextTick(facts(idleTick('no_dialable_leads'), [at(90_000), null, at(30_000)]))).toEqual({
      kind: 'idle',
      at: at(30_000).toISOString(),
      reason: 'no_dialable_leads',
    });
  });

  it('sleeps until the backstop when nothing is due, or when the due moment is later', () => {
    const backstop = { kind: 'idle', at: at(IDLE_BACKSTOP_MS).toISOString(), reason: 'no_agent_capacity' };
    expect(nextTick(facts(idleTick('no_agent_capacity'), []))).toEqual(backstop);
    expect(nextTick(facts(idleTick('no_agent_capacity'), [null]))).toEqual(backstop);
    expect(nextTick(facts(idleTick('no_agent_capacity'), [at(IDLE_BACKSTOP_MS * 3)]))).toEqual(backstop);
    expect(nextTick({ ...facts(idleTick('no_agent_capacity')), backstopMs: 5000 })).toMatchObject({ at: at(5000).toISOString() });
  });

  it('never ticks sooner than the cadence, even for a moment already past', () => {
    expect(nextTick(facts(idleTick('no_dialable_leads'), [at(-60_000)]))).toMatchObject({ kind: 'idle', at: at(1000).toISOString() });
    expect(nextTick(facts(idleTick('no_dialable_leads'), [at(200)]))).toMatchObject({ at: at(1000).toISOString() });
  });

  it('rechecks a hold no event announces (trunk, caller-id pool, billing, AI budget) within a minute', () => {
    for (const idle of ['trunk_disabled', 'caller_id_pool_parked', 'billing_blocked', 'ai_budget_exhausted']) {
      expect(nextTick(facts(idleTick(idle), [at(5000)]))).toEqual({ kind: 'idle', at: at(HELD_RECHECK_MS).toISOString(), reason: idle });
    }
  });
});

describe('windowOpensAt: when quiet hours let a refused lead through', () => {
  it('is the next 08:00 local in the number zone when the call was refused at night', () => {
    // 03:00 in Denver (UTC-7 in November): the window opens at 08:00 local, 15:00 UTC.
    expect(windowOpensAt(new Date('2026-11-27T10:00:00Z'), ['America/Denver'], null)).toEqual(new Date('2026-11-27T15:00:00Z'));
    // 22:00 in Denver: the next morning.
    expect(windowOpensAt(new Date('2026-11-28T05:00:00Z'), ['America/Denver'], null)).toEqual(new Date('2026-11-28T15:00:00Z'));
  });

  it('waits for every zone the number may be in to be open at once', () => {
    // 06:00 UTC: New York 01:00, Los Angeles 22:00 (the day before). New York opens first (13:00 UTC),
    // but Los Angeles is still shut until 16:00 UTC.
    expect(windowOpensAt(new Date('2026-11-27T06:00:00Z'), ['America/New_York', 'America/Los_Angeles'], null)).toEqual(new Date('2026-11-27T16:00:00Z'));
  });

  it('honours the campaign window to the second, in its default zone or the destination zone', () => {
    const window = { start: '13:30:15', end: '17:00:00', defaultTimezone: 'UTC', destinationLocal: false };
    // 12:00 UTC: inside 08:00-21:00 in London, the campaign window opens at 13:30:15 UTC.
    expect(windowOpensAt(new Date('2026-11-27T12:00:00Z'), ['Europe/London'], window)).toEqual(new Date('2026-11-27T13:30:15Z'));
    const local = { start: '10:00', end: '12:00', defaultTimezone: null, destinationLocal: true };
    // 18:00 UTC = 11:00 Denver: open now, so the next opening is tomorrow 10:00 Denver (17:00 UTC).
    expect(windowOpensAt(new Date('2026-11-27T18:00:00Z'), ['America/Denver'], local)).toEqual(new Date('2026-11-28T17:00:00Z'));
  });

  it('opens at the wall-clock start on a day the clocks change', () => {
    // US DST starts 2027-03-14 02:00 local: 08:00 EDT that morning is 12:00 UTC.
    expect(windowOpensAt(new Date('2027-03-14T06:00:00Z'), ['America/New_York'], null)).toEqual(new Date('2027-03-14T12:00:00Z'));
  });

  it('is null for an unknown zone, no zone, a window with no zone to be read in, or a window that never opens', () => {
    expect(windowOpensAt(now, [], null)).toBeNull();
    expect(windowOpensAt(now, ['Mars/Olympus'], null)).toBeNull();
    expect(windowOpensAt(now, ['UTC'], { start: '09:00', end: '10:00', defaultTimezone: null, destinationLocal: false })).toBeNull();
    // 22:00-23:00 local never overlaps 08:00-21:00.
    expect(windowOpensAt(now, ['UTC'], { start: '22:00', end: '23:00', defaultTimezone: 'UTC', destinationLocal: false })).toBeNull();
  });
});
