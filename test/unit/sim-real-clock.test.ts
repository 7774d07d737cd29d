import { realClock } from '../../src/switch/simulator/clock';

/** Busy-waits a fraction of a millisecond so timers start at every phase of the millisecond. */
function spinMicros(us: number): void {
  const start = process.hrtime.bigint();
  while (Number(process.hrtime.bigint() - start) < us * 1000);
}

function lateness(ms: number): Promise<number> {
  return new Promise((resolve) => {
    spinMicros(Math.random() * 1000);
    const due = realClock.now() + ms;
    realClock.setTimeout(() => resolve(realClock.now() - due), ms);
  });
}

describe('the simulator real clock', () => {
  it('never runs a timer before now() reaches the time it was due', async () => {
    // A bare setTimeout fires before Date.now() reaches its due time on about one timer in forty.
    const late: number[] = [];
    for (let i = 0; i < 600; i++) late.push(await lateness(1 + (i % 3)));
    expect(Math.min(...late)).toBeGreaterThanOrEqual(0);
  });

  it('runs nothing once a timer is cleared', async () => {
    let fired = 0;
    for (let i = 0; i < 50; i++) {
      const timer = realClock.setTimeout(() => fired++, 1);
      spinMicros(900);
      realClock.clearTimeout(timer);
    }
    await new Promise((resolve) => realClock.setTimeout(() => resolve(undefined), 20));
    expect(fired).toBe(0);
  });
});
