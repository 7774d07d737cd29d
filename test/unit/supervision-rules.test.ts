import { commandFor, mayTakeRole, planAllows, quotaFull, SUPERVISION_MODES } from '../../src/modules/supervision/supervision.rules';
import { supervisionLegEnd } from '../../src/modules/supervision/supervision-leg.relay';
import type { EslEvent } from '../../src/switch/esl';

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

describe('supervisor leg hangups (supervision-leg.relay.ts)', () => {
  const hangup = (variables: Record<string, string>, name = 'CHANNEL_HANGUP_COMPLETE'): EslEvent =>
    ({ name, uuid: 'leg-1', headers: {}, variables }) as unknown as EslEvent;
  const ours = { dd_supervision_id: 's1', dd_supervision_tenant_id: 't1' };

  it('ends the session when the supervisor hung up (recv_bye)', () => {
    expect(supervisionLegEnd(hangup({ ...ours, sip_hangup_disposition: 'recv_bye' }))).toEqual({ tenantId: 't1', sessionId: 's1', legUuid: 'leg-1' });
  });

  it('leaves a leg the switch ended, another event, and any leg that is not a supervisor leg', () => {
    expect(supervisionLegEnd(hangup({ ...ours, sip_hangup_disposition: 'send_bye' }))).toBeNull();
    expect(supervisionLegEnd(hangup({ ...ours, sip_hangup_disposition: 'recv_bye' }, 'CHANNEL_ANSWER'))).toBeNull();
    expect(supervisionLegEnd(hangup({ dd_supervision_id: 's1', sip_hangup_disposition: 'recv_bye' }))).toBeNull();
    expect(supervisionLegEnd(hangup({ dd_call_attempt_id: 'a1', dd_tenant_id: 't1', sip_hangup_disposition: 'recv_bye' }))).toBeNull();
  });
});
