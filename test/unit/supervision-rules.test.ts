import { commandFor, mayTakeRole, planAllows, quotaFull, SUPERVISION_MODES } from '../../src/modules/supervision/supervision.rules';

describe('supervision rules (SPEC "Supervision")', () => {
  it('lets only supervisor and admin roles supervise', () => {
    expect(['agent', 'supervisor', 'admin', ''].map(mayTakeRole)).toEqual([false, true, true, false]);
  });

  it('refuses the eavesdrop modes on an inactive plan and never takeover', () => {
    const statuses = ['active', 'trialing', 'past_due', 'suspended', 'cancelled'];
    for (const mode of SUPERVISION_MODES) {
      expect(statuses.map((s) => planAllows(mode, s))).toEqual(mode === 'takeover' ? [true, true, true, true, true] : [true, true, false, false, false]);
    }
  });

  it('targets the consumer leg for listen and barge, the agent leg for whisper, and bridges the consumer for takeover', () => {
    expect(commandFor('listen', 'c', 'a')).toEqual({ kind: 'eavesdrop', targetUuid: 'c', mode: 'listen' });
    expect(commandFor('whisper', 'c', 'a')).toEqual({ kind: 'eavesdrop', targetUuid: 'a', mode: 'whisper' });
    expect(commandFor('barge', 'c', 'a')).toEqual({ kind: 'eavesdrop', targetUuid: 'c', mode: 'barge' });
    expect(commandFor('takeover', 'c', 'a')).toEqual({ kind: 'takeover', consumerUuid: 'c' });
  });

  it('needs an agent leg only to whisper', () => {
    expect(commandFor('whisper', 'c', null)).toBeNull();
    expect(commandFor('listen', 'c', null)).not.toBeNull();
    expect(commandFor('barge', 'c', null)).not.toBeNull();
    expect(commandFor('takeover', 'c', null)).not.toBeNull();
  });

  it('fills the quota at the limit, not counting the session a new mode replaces', () => {
    expect(quotaFull(1, false, 2)).toBe(false);
    expect(quotaFull(2, false, 2)).toBe(true);
    expect(quotaFull(2, true, 2)).toBe(false);
    expect(quotaFull(3, true, 2)).toBe(true);
    expect(quotaFull(0, false, 0)).toBe(true);
  });
});
