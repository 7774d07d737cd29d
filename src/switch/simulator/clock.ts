/**
 * Time source of the switch simulator. Every ring, talk, AMD, prompt and recording timer goes
 * through a Clock, so tests drive a whole call with a FakeClock and `advance(ms)` instead of
 * sleeping.
 */
export interface ClockTimer {
  readonly __clockTimer: true;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

interface RealTimer extends ClockTimer {
  handle: NodeJS.Timeout;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    // Node's timers run on the monotonic clock in whole milliseconds and can fire up to 1 ms before
    // Date.now() reaches the due time; callers compare now() against deadlines they set with the
    // same delay (a consumer still "speaking" when its end-of-line timer fires never hangs up), so a
    // timer that wakes early waits out the remainder.
    const due = Date.now() + Math.max(0, ms);
    const timer: RealTimer = { __clockTimer: true, handle: setTimeout(fire, Math.max(0, ms)) };
    function fire(): void {
      const left = due - Date.now();
      if (left > 0) timer.handle = setTimeout(fire, left);
      else fn();
    }
    return timer;
  },
  clearTimeout(timer) {
    clearTimeout((timer as RealTimer).handle);
  },
};

export interface FakeClock extends Clock {
  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way in time order
   * (timers scheduled by a firing timer fire too when they fall inside the window). `advance(0)`
   * fires the timers due now.
   */
  advance(ms: number): void;
  /** Number of timers not yet fired. */
  pending(): number;
}

interface FakeTimer extends ClockTimer {
  at: number;
  seq: number;
  fn: () => void;
}

export function createFakeClock(startMs: number = Date.now()): FakeClock {
  let now = startMs;
  let seq = 0;
  const timers = new Set<FakeTimer>();

  const nextDue = (limit: number): FakeTimer | undefined => {
    let best: FakeTimer | undefined;
    for (const t of timers) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  };

  return {
    now: () => now,
    setTimeout(fn, ms) {
      const timer: FakeTimer = { __clockTimer: true, at: now + Math.max(0, ms), seq: seq++, fn };
      timers.add(timer);
      return timer;
    },
    clearTimeout(timer) {
      timers.delete(timer as FakeTimer);
    },
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError('advance(ms) needs a finite ms >= 0');
      const target = now + ms;
      for (let t = nextDue(target); t; t = nextDue(target)) {
        timers.delete(t);
        now = t.at;
        t.fn();
      }
      now = target;
    },
    pending: () => timers.size,
  };
}
