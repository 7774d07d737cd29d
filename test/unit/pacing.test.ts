import { AbandonmentController, linesToDial, pacingModeOf } from '../../src/modules/dialer/pacing';

describe('pacingModeOf', () => {
  it.each([
    ['predictive', 'predictive'],
    ['progressive', 'progressive'],
    ['tts_blast', 'progressive'],
    ['preview', 'none'],
    ['manual', 'none'],
  ])('%s dials %s', (type, mode) => {
    expect(pacingModeOf(type)).toBe(mode);
  });
});

describe('linesToDial', () => {
  const base = { mode: 'predictive' as const, availableAgents: 10, ringing: 0, ratio: 2.5, overDialAllowed: true, capacity: Infinity };

  it('dials ratio × available agents minus what is already ringing', () => {
    expect(linesToDial(base)).toBe(25);
    expect(linesToDial({ ...base, ringing: 20 })).toBe(5);
    expect(linesToDial({ ...base, ringing: 30 })).toBe(0);
  });

  it('never over-dials without the abandoned-call identification', () => {
    expect(linesToDial({ ...base, overDialAllowed: false })).toBe(10);
  });

  it('dials one line per agent when progressive, none for preview and manual', () => {
    expect(linesToDial({ ...base, mode: 'progressive' })).toBe(10);
    expect(linesToDial({ ...base, mode: 'none' })).toBe(0);
  });

  it('is capped by channel and cps capacity, and dials nothing without agents', () => {
    expect(linesToDial({ ...base, capacity: 7 })).toBe(7);
    expect(linesToDial({ ...base, capacity: 0 })).toBe(0);
    expect(linesToDial({ ...base, availableAgents: 0 })).toBe(0);
  });
});

describe('AbandonmentController', () => {
  const options = { minRatio: 1, maxRatio: 3, threshold: 0.03, initialRatio: 1.5 };

  it('raises the ratio while abandonment is well under the threshold, up to the maximum', () => {
    const c = new AbandonmentController(options);
    for (let i = 0; i < 200; i += 1) {
      c.record(10, 0);
      c.adjust();
    }
    expect(c.ratio).toBe(3);
  });

  it('backs off when abandonment nears the threshold, down to the minimum', () => {
    const c = new AbandonmentController({ ...options, initialRatio: 3 });
    for (let i = 0; i < 200; i += 1) {
      c.record(9, 1);
      c.adjust();
    }
    expect(c.ratio).toBe(1);
  });

  it('measures the rate over a rolling window of answered calls', () => {
    const c = new AbandonmentController({ ...options, window: 100 });
    c.record(50, 50);
    c.record(100, 0);
    expect(c.abandonmentRate()).toBe(0);
    expect(c.snapshot.abandoned).toBe(50);
  });

  it('holds steady between the two bands', () => {
    const c = new AbandonmentController({ ...options, initialRatio: 2 });
    c.record(98, 2); // 2 %: above 0.4 × 3 %, under 0.8 × 3 %
    expect(c.adjust()).toBe(2);
  });
});
