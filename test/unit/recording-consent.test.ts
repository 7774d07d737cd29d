import {
  evaluateRecordingConsent,
  isAllPartyForPhone,
  RECORDING_RULES,
  RECORDING_RULES_VERSION,
  UNCONFIRMED_RECORDING_STATES,
  type CallLegStates,
} from '../../src/modules/recordings/recording-consent';

const legs = (consumer: Array<string | null>, caller: Array<string | null> = []): CallLegStates => ({
  consumer: consumer.map((state, i) => ({ source: (['area_code', 'contact_state', 'postal_code'] as const)[i]!, state })),
  caller: caller.map((state, i) => ({ source: (['did_state', 'caller_id_area_code'] as const)[i]!, state })),
});

describe('the all-party recording rules (REGULATIONS.md §3) as data', () => {
  it('lists R1-R13 with a citation and a source each, keyed by their state', () => {
    expect(Object.values(RECORDING_RULES).map((r) => r.id)).toEqual(['R1', 'R2', 'R3', 'R4', 'R5', 'R6', 'R7', 'R8', 'R9', 'R10', 'R11', 'R12', 'R13']);
    for (const [state, rule] of Object.entries(RECORDING_RULES)) {
      expect(rule.state).toBe(state);
      expect(rule.citation).not.toBe('');
      expect(rule.source).toMatch(/^S\d+(, S\d+)*$/);
      expect(['P', 'S']).toContain(rule.status);
    }
  });

  it('counts phone all-party as all-party and in-person all-party as not (only phone calls are recorded)', () => {
    expect(isAllPartyForPhone('all_party')).toBe(true);
    expect(isAllPartyForPhone('phone_all_party')).toBe(true);
    expect(isAllPartyForPhone('in_person_all_party')).toBe(false);
    expect(isAllPartyForPhone('one_party')).toBe(false);
    expect(RECORDING_RULES.NV!.mode).toBe('phone_all_party');
    expect(RECORDING_RULES.CT!.mode).toBe('phone_all_party');
    expect(RECORDING_RULES.OR!.mode).toBe('in_person_all_party');
    expect(RECORDING_RULES.MI!.mode).toBe('one_party');
  });

  it('wants the notice on the recording only where the law says so (Washington)', () => {
    expect(Object.values(RECORDING_RULES).filter((r) => r.notice_must_be_recorded).map((r) => r.state)).toEqual(['WA']);
  });

  it('leaves the states whose sources conflict out of the table', () => {
    for (const state of UNCONFIRMED_RECORDING_STATES) expect(RECORDING_RULES[state]).toBeUndefined();
    expect(evaluateRecordingConsent(legs(['DE', 'VT'])).two_party_consent_state).toBeNull();
  });
});

describe('evaluateRecordingConsent', () => {
  it('is one-party when no state of either leg requires all parties', () => {
    expect(evaluateRecordingConsent(legs(['CO', 'GA', null], ['TX', 'NY']))).toEqual({
      two_party_consent_state: null,
      notice_must_be_recorded: false,
      applied: [],
      rules_version: RECORDING_RULES_VERSION,
    });
    expect(evaluateRecordingConsent(legs([], [])).two_party_consent_state).toBeNull();
  });

  it("applies the consumer's all-party state from any of its sources", () => {
    expect(evaluateRecordingConsent(legs(['CA', null, null])).two_party_consent_state).toBe('CA');
    expect(evaluateRecordingConsent(legs(['CO', 'fl', null])).two_party_consent_state).toBe('FL');
    const d = evaluateRecordingConsent(legs([null, null, ' pa ']));
    expect(d.two_party_consent_state).toBe('PA');
    expect(d.applied).toEqual([{ leg: 'consumer', source: 'postal_code', state: 'PA', rule_id: 'R8', mode: 'all_party', citation: '18 Pa.C.S. 5703-5704' }]);
  });

  it("applies the calling side's all-party state (the tenant has none: its DID and caller id)", () => {
    const d = evaluateRecordingConsent(legs(['CO'], [null, 'NV']));
    expect(d.two_party_consent_state).toBe('NV');
    expect(d.applied).toEqual([expect.objectContaining({ leg: 'caller', source: 'caller_id_area_code', state: 'NV', mode: 'phone_all_party' })]);
    expect(evaluateRecordingConsent(legs(['CO'], ['CT', 'CO'])).two_party_consent_state).toBe('CT');
  });

  it('ignores in-person-only and participant-may-record states', () => {
    expect(evaluateRecordingConsent(legs(['OR', 'MI'], ['OR'])).two_party_consent_state).toBeNull();
  });

  it('reports the strictest state: the notice-on-recording rule first, then the consumer leg, then alphabetical', () => {
    const wa = evaluateRecordingConsent(legs(['CA'], ['WA']));
    expect(wa.two_party_consent_state).toBe('WA');
    expect(wa.notice_must_be_recorded).toBe(true);
    expect(wa.applied.map((a) => a.state)).toEqual(['CA', 'WA']);
    expect(evaluateRecordingConsent(legs(['MD'], ['CA'])).two_party_consent_state).toBe('MD');
    expect(evaluateRecordingConsent(legs(['PA', 'FL'])).two_party_consent_state).toBe('FL');
  });

  it('lists a state once per leg even when several sources name it', () => {
    const d = evaluateRecordingConsent(legs(['CA', 'CA', 'CA'], ['CA', 'CA']));
    expect(d.applied.map((a) => `${a.leg}:${a.state}:${a.source}`)).toEqual(['consumer:CA:area_code', 'caller:CA:did_state']);
    expect(d.notice_must_be_recorded).toBe(false);
  });
});
