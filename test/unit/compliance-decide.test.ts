import { decide, destinationZones, insideWindow, isValidZone, jurisdictionsOf } from '../../src/modules/compliance/compliance.decide';
import { DEFAULT_POLICY } from '../../src/modules/compliance/compliance.policy';
import { GATE_CHAIN, type DecisionFacts, type DecisionRequest, type Gate } from '../../src/modules/compliance/compliance.types';

const NOON_NY = new Date('2026-06-15T16:00:00Z'); // 12:00 EDT

function request(over: Partial<DecisionRequest> = {}): DecisionRequest {
  return { debtId: 'debt-1', phone: '+16175550123', channel: 'voice', campaignId: null, initiation: 'automated', artificialVoice: false, ...over };
}

const NO_COUNTS = {
  regfCalls7d: 0,
  priorAttempts7d: 0,
  debt7d: 0,
  debt30d: 0,
  consumer7d: 0,
  debtCalls24h: 0,
  priorDebt7d: 0,
  priorDebt30d: 0,
  priorConsumer7d: 0,
  priorDebt24h: 0,
};

function facts(over: Partial<DecisionFacts> = {}): DecisionFacts {
  return {
    humanInitiatedEnabled: false,
    debt: { id: 'debt-1', state: 'open', debtType: 'other', consumerRef: 'c-1', ceaseAndDesistAt: null },
    contact: { lineType: 'mobile', timezone: null, usState: null, city: null, postalCode: null, postalState: null, nycBorough: null },
    places: [],
    consent: { source: 'import', grantedAt: new Date('2026-11-10T00:00:00Z'), givenOn: '2026-01-10', revokedAt: null, revokedSource: null },
    dncSources: [],
    counts: { ...NO_COUNTS },
    lastConversationAt: null,
    reassignedOn: null,
    campaign: null,
    policyVersion: 3,
    policy: DEFAULT_POLICY,
    disclosureValid: null,
    numberZones: ['America/New_York'],
    areaCodeState: 'MA',
    numberNonGeographic: false,
    ...over,
  };
}

function outcomeOf(decision: ReturnType<typeof decide>, gate: Gate) {
  return decision.checks.find((c) => c.gate === gate)!.outcome;
}

describe('decide: a clean request', () => {
  it('passes every gate and records each check in chain order with the versions', () => {
    const d = decide(request(), facts(), NOON_NY);
    expect(d.allowed).toBe(true);
    expect(d.gate).toBeNull();
    expect(d.checks.map((c) => c.gate)).toEqual([...GATE_CHAIN]);
    expect(d.policyVersion).toBe(3);
    expect(d.rulesVersion).toMatch(/^\d{4}-\d{2}-\d{2}/);
    expect(d.evaluatedAt).toBe(NOON_NY.toISOString());
    expect(d.checks.every((c) => c.outcome !== 'block')).toBe(true);
  });
});

describe('consent gates', () => {
  it('refuses a number with no consent on record (tcpa_no_consent)', () => {
    const d = decide(request(), facts({ consent: null }), NOON_NY);
    expect(d.gate).toBe('tcpa_no_consent');
    expect(d.allowed).toBe(false);
  });

  it('refuses revoked consent (consent_revoked)', () => {
    const d = decide(request(), facts({ consent: { source: 'import', grantedAt: new Date('2026-01-01'), givenOn: null, revokedAt: new Date('2026-05-01'), revokedSource: 'sms_stop' } }), NOON_NY);
    expect(d.gate).toBe('consent_revoked');
    expect(d.reason).toContain('sms_stop');
  });

  it('exempts a human-initiated live call without artificial voice when the tenant enables it', () => {
    const d = decide(request({ initiation: 'human' }), facts({ consent: null, humanInitiatedEnabled: true }), NOON_NY);
    expect(d.allowed).toBe(true);
    expect(outcomeOf(d, 'tcpa_no_consent')).toBe('exempt');
  });

  it.each([
    ['the tenant flag is off', request({ initiation: 'human' }), false],
    ['the call uses an artificial voice', request({ initiation: 'human', artificialVoice: true }), true],
    ['the call is automated', request({ initiation: 'automated' }), true],
    ['it is a text', request({ initiation: 'human', channel: 'sms' }), true],
  ])('does not exempt when %s', (_why, req, flag) => {
    const d = decide(req, facts({ consent: null, humanInitiatedEnabled: flag }), NOON_NY);
    expect(d.gate).toBe('tcpa_no_consent');
  });

  it('keeps every other gate on an exempt call', () => {
    const d = decide(request({ initiation: 'human' }), facts({ consent: null, humanInitiatedEnabled: true, dncSources: ['optout_digit'] }), NOON_NY);
    expect(d.gate).toBe('dnc_listed');
  });
});

describe('do-not-call gates', () => {
  it('refuses a listed number and names the sources', () => {
    const d = decide(request(), facts({ dncSources: ['suppression_import', 'optout_keyword'] }), NOON_NY);
    expect(d.gate).toBe('dnc_listed');
    expect(d.reason).toContain('optout_keyword, suppression_import');
  });

  it('refuses a debt under cease-and-desist', () => {
    const d = decide(request(), facts({ debt: { id: 'debt-1', state: 'open', debtType: 'other', consumerRef: 'c', ceaseAndDesistAt: new Date('2026-06-01') } }), NOON_NY);
    expect(d.gate).toBe('cease_and_desist');
  });

  it('applies do-not-call to texts too', () => {
    expect(decide(request({ channel: 'sms' }), facts({ dncSources: ['api'] }), NOON_NY).gate).toBe('dnc_listed');
  });
});

describe('quiet hours', () => {
  const at = (iso: string, over: Partial<DecisionFacts> = {}, req: Partial<DecisionRequest> = {}) => decide(request(req), facts(over), new Date(iso));

  it.each([
    ['2026-06-15T11:59:59Z', 'quiet_hours'], // 07:59:59 EDT
    ['2026-06-15T12:00:00Z', null], // 08:00 EDT opens
    ['2026-06-16T00:59:59Z', null], // 20:59:59 EDT
    ['2026-06-16T01:00:00Z', 'quiet_hours'], // 21:00 EDT closes
  ])('judges the window edges at %s', (iso, gate) => {
    expect(at(iso).gate).toBe(gate);
  });

  it('follows the spring-forward transition (08:30 EDT on the first day of DST is open)', () => {
    expect(at('2026-03-08T12:30:00Z').gate).toBeNull();
  });

  it('follows the fall-back transition (07:30 EST on the first day of standard time is closed)', () => {
    expect(at('2026-11-01T12:30:00Z').gate).toBe('quiet_hours');
  });

  it('needs every zone of a multi-zone area code to be open', () => {
    const idaho = { numberZones: ['America/Boise', 'America/Los_Angeles'] };
    expect(at('2026-06-15T14:30:00Z', idaho).gate).toBe('quiet_hours'); // 08:30 MDT but 07:30 PDT
    expect(at('2026-06-15T15:30:00Z', idaho).gate).toBeNull();
    expect(at('2026-06-16T03:30:00Z', idaho).gate).toBe('quiet_hours'); // 21:30 MDT
    expect(at('2026-06-16T02:30:00Z', idaho).gate).toBeNull(); // 20:30 MDT, 19:30 PDT
  });

  it('never judges a stored or given zone alone: the area code and the address count too', () => {
    const hawaii = { numberZones: ['Pacific/Honolulu'], contact: { ...facts().contact!, timezone: 'America/New_York' } };
    // 12:00 in New York is 06:00 in Honolulu: the 808 number's zone keeps the call out.
    const d = at('2026-06-15T16:00:00Z', hawaii);
    expect(d.gate).toBe('quiet_hours');
    expect(d.reason).toContain('Pacific/Honolulu');
    expect(d.zones).toEqual(['America/New_York', 'Pacific/Honolulu']);
    expect(at('2026-06-15T22:00:00Z', hawaii).gate).toBeNull(); // 18:00 EDT, 12:00 HST
    const idaho = { numberZones: ['America/Boise'] };
    expect(at('2026-06-15T14:30:00Z', idaho, { timezone: 'America/Los_Angeles' }).gate).toBe('quiet_hours'); // 07:30 PDT
    const texan = { numberZones: ['America/Chicago'], contact: { ...facts().contact!, usState: 'TX' } };
    expect(destinationZones(request(), facts(texan))).toEqual(['America/Chicago', 'America/Denver']);
    const postal = { numberZones: ['America/New_York'], contact: { ...facts().contact!, postalState: 'FL' } };
    expect(destinationZones(request(), facts(postal))).toEqual(['America/Chicago', 'America/New_York']);
  });

  describe('numbers without a zone (CONTRACT section 12)', () => {
    const tollFree = { numberZones: [], numberNonGeographic: true, areaCodeState: null };
    it('refuses a toll-free, personal or premium number with no zone given or stored, voice and text', () => {
      for (const channel of ['voice', 'sms'] as const) {
        const d = at('2026-06-15T16:00:00Z', tollFree, { phone: '+18005550123', channel });
        expect(d.gate).toBe('quiet_hours');
        expect(d.reason).toContain('non-geographic');
        expect(d.zones).toEqual([]);
      }
    });
    it('judges it in the stored or given zone and the address’s zones', () => {
      expect(at('2026-06-15T16:00:00Z', { ...tollFree, contact: { ...facts().contact!, timezone: 'America/New_York' } }, { phone: '+18005550123' }).gate).toBeNull();
      expect(at('2026-06-15T16:00:00Z', tollFree, { phone: '+18005550123', channel: 'sms', timezone: 'America/Chicago' }).gate).toBeNull();
      const withState = { ...tollFree, contact: { ...facts().contact!, timezone: 'America/New_York', usState: 'HI' } };
      expect(at('2026-06-15T16:00:00Z', withState, { phone: '+18005550123' }).gate).toBe('quiet_hours');
    });
    it('does not resolve from an address alone', () => {
      expect(at('2026-06-15T16:00:00Z', { ...tollFree, contact: { ...facts().contact!, usState: 'NY' } }, { phone: '+18005550123' }).gate).toBe('quiet_hours');
    });
  });

  it('ignores an invalid zone name instead of trusting it', () => {
    const bad = { contact: { ...facts().contact!, timezone: 'Mars/Olympus' }, numberZones: ['America/Los_Angeles'] };
    expect(isValidZone('Mars/Olympus')).toBe(false);
    expect(destinationZones(request(), facts(bad))).toEqual(['America/Los_Angeles']);
  });

  it('refuses when no zone resolves', () => {
    const d = at('2026-06-15T16:00:00Z', { numberZones: [] });
    expect(d.gate).toBe('quiet_hours');
    expect(d.reason).toContain('cannot be resolved');
  });

  it('applies to texts by send time', () => {
    expect(at('2026-06-16T02:00:00Z', {}, { channel: 'sms' }).gate).toBe('quiet_hours');
  });

  describe('campaign calling window (only narrows)', () => {
    const campaign = (over: Partial<NonNullable<DecisionFacts['campaign']>>) => ({
      campaign: { campaignType: 'progressive', callingWindowStart: '10:00', callingWindowEnd: '18:00', defaultTimezone: 'America/Chicago', destinationLocal: false, ...over },
    });

    it('is read in the campaign zone when not destination-local', () => {
      // 09:30 EDT = 08:30 CDT: legal, but before the campaign window in Chicago.
      expect(at('2026-06-15T13:30:00Z', campaign({})).gate).toBe('quiet_hours');
      expect(at('2026-06-15T15:30:00Z', campaign({})).gate).toBeNull(); // 10:30 CDT
    });

    it('is read in every destination zone when destination-local', () => {
      const c = campaign({ destinationLocal: true, defaultTimezone: null });
      expect(at('2026-06-15T13:30:00Z', c).gate).toBe('quiet_hours'); // 09:30 EDT
      expect(at('2026-06-15T14:30:00Z', c).gate).toBeNull(); // 10:30 EDT
    });

    it('cannot widen the legal window', () => {
      const wide = campaign({ callingWindowStart: '06:00', callingWindowEnd: '23:00', defaultTimezone: 'America/New_York' });
      expect(at('2026-06-15T11:00:00Z', wide).gate).toBe('quiet_hours'); // 07:00 EDT
    });

    it('is exact to the second', () => {
      const c = campaign({ callingWindowStart: '10:00:30', callingWindowEnd: '18:00:00' });
      expect(at('2026-06-15T15:00:15Z', c).gate).toBe('quiet_hours'); // 10:00:15 CDT
      expect(at('2026-06-15T15:00:45Z', c).gate).toBeNull();
    });

    it('refuses a window with no zone to be read in', () => {
      const d = at('2026-06-15T16:00:00Z', campaign({ defaultTimezone: null }));
      expect(d.gate).toBe('quiet_hours');
      expect(d.reason).toContain('no valid time zone');
    });
  });
});

describe('Regulation F', () => {
  const counts = (regfCalls7d: number, priorAttempts7d = 0) => ({ counts: { ...facts().counts, regfCalls7d, priorAttempts7d } });

  it('allows the 7th call and refuses the 8th within 7 days', () => {
    expect(decide(request(), facts(counts(6)), NOON_NY).gate).toBeNull();
    expect(decide(request(), facts(counts(7)), NOON_NY).gate).toBe('regf_7in7');
  });

  it('counts the previous system’s calls (prior_attempts_7d)', () => {
    expect(decide(request(), facts(counts(3, 4)), NOON_NY).gate).toBe('regf_7in7');
    expect(decide(request(), facts(counts(3, 3)), NOON_NY).gate).toBeNull();
  });

  it('does not count texts or apply to them', () => {
    const d = decide(request({ channel: 'sms' }), facts({ ...counts(9), consent: facts().consent }), NOON_NY);
    expect(d.gate).toBeNull();
    expect(outcomeOf(d, 'regf_7in7')).toBe('not_applicable');
  });

  describe('post-contact: the conversation day is day 1, calls resume on day 8', () => {
    const conversation = { lastConversationAt: new Date('2026-09-08T14:00:00Z') }; // Tue 10:00 EDT
    it.each([
      ['2026-09-08T18:00:00Z', 'regf_post_contact'], // day 1, 14:00 EDT
      ['2026-09-14T23:59:00Z', 'regf_post_contact'], // day 7, 19:59 EDT
      ['2026-09-15T12:00:00Z', null], // day 8, 08:00 EDT
    ])('at %s', (iso, gate) => {
      expect(decide(request(), facts(conversation), new Date(iso)).gate).toBe(gate);
    });

    it('counts days in every zone the consumer could be in', () => {
      // 22:30 EDT on Sep 8 is 19:30 PDT on Sep 8; on Sep 15 at 07:30 PDT (10:30 EDT) the Pacific day 8 has begun too.
      const late = { lastConversationAt: new Date('2026-09-09T02:30:00Z'), numberZones: ['America/New_York', 'America/Los_Angeles'] };
      expect(outcomeOf(decide(request(), facts(late), new Date('2026-09-15T15:00:00Z')), 'regf_post_contact')).toBe('pass');
      expect(outcomeOf(decide(request(), facts(late), new Date('2026-09-15T03:30:00Z')), 'regf_post_contact')).toBe('block');
    });

    it('judges every UTC offset when no zone resolves (at UTC+11 day 8 has not begun)', () => {
      const d = decide(request(), facts({ ...conversation, numberZones: [] }), new Date('2026-09-15T12:00:00Z'));
      expect(outcomeOf(d, 'regf_post_contact')).toBe('block');
      const later = decide(request(), facts({ ...conversation, numberZones: [] }), new Date('2026-09-16T12:00:00Z'));
      expect(outcomeOf(later, 'regf_post_contact')).toBe('pass');
    });
  });
});

describe('state and city limits', () => {
  const comms = (debt7d: number, consumer7d = debt7d) => ({ counts: { ...facts().counts, debt7d, consumer7d } });
  const contact = (over: Partial<NonNullable<DecisionFacts['contact']>>) => ({ contact: { ...facts().contact!, ...over } });

  it('caps Massachusetts at 2 per 7 days per debt (address or area code)', () => {
    expect(decide(request(), facts({ ...comms(1), areaCodeState: 'MA' }), NOON_NY).gate).toBeNull();
    const d = decide(request(), facts({ ...comms(2), areaCodeState: 'MA' }), NOON_NY);
    expect(d.gate).toBe('state_limit');
    expect(d.checks.find((c) => c.gate === 'state_limit')!.citations[0]).toContain('940 CMR 7.04');
    expect(decide(request(), facts({ ...comms(2), ...contact({ usState: 'ma' }) }), NOON_NY).gate).toBe('state_limit');
  });

  it('caps Washington at 3 per 7 days per debtor across debts', () => {
    expect(decide(request(), facts({ counts: { ...facts().counts, debt7d: 0, consumer7d: 3 }, ...contact({ usState: 'WA' }), numberZones: ['America/Los_Angeles'] }), new Date('2026-06-15T18:00:00Z')).gate).toBe('state_limit');
  });

  it('caps New York City at 3 per 7 days once in force (2026-09-01), by borough or city name', () => {
    const inForce = new Date('2026-10-15T16:00:00Z');
    const inNyc = { ...contact({ nycBorough: 'queens', usState: 'NY' }), areaCodeState: 'NY' };
    expect(decide(request(), facts({ ...comms(3), ...inNyc }), inForce).gate).toBe('state_limit');
    expect(decide(request(), facts({ ...comms(2), ...inNyc }), inForce).gate).toBeNull();
    expect(decide(request(), facts({ ...comms(3), ...inNyc }), new Date('2026-08-31T16:00:00Z')).gate).toBeNull();
    expect(decide(request(), facts({ ...comms(3), ...contact({ city: 'Brooklyn' }), areaCodeState: 'NY' }), inForce).gate).toBe('state_limit');
    expect(jurisdictionsOf(facts({ ...contact({ city: 'Brooklyn', usState: 'NY' }), areaCodeState: null }), '+17185550123')).toEqual({ states: ['NY'], nyc: true, unknown: false });
  });

  it('does not treat a New York number outside the city as NYC', () => {
    expect(decide(request(), facts({ ...comms(5), ...contact({ usState: 'NY', city: 'Albany' }), areaCodeState: 'NY' }), NOON_NY).gate).toBeNull();
  });

  it('counts texts toward state caps', () => {
    expect(decide(request({ channel: 'sms' }), facts({ ...comms(2), areaCodeState: 'MA' }), NOON_NY).gate).toBe('state_limit');
  });

  const inForce = new Date('2026-10-15T16:00:00Z');
  const place = (over: Partial<DecisionFacts['places'][number]>) => ({ usState: null, postalState: null, city: null, nycBorough: null, ...over });

  it('protects every number of a consumer with an address on any of their contacts', () => {
    const elsewhere = { areaCodeState: 'CA', numberZones: ['America/New_York'] };
    expect(decide(request(), facts({ ...comms(3), ...elsewhere }), inForce).gate).toBeNull();
    const nycOnOther = decide(request(), facts({ ...comms(3), ...elsewhere, places: [place({ nycBorough: 'brooklyn', postalState: 'NY' })] }), inForce);
    expect(nycOnOther.gate).toBe('state_limit');
    expect(nycOnOther.reason).toContain('NYC-6RCNY5-77');
    const maOnOther = decide(request(), facts({ ...comms(2), ...elsewhere, places: [place({ usState: 'ma' })] }), inForce);
    expect(maOnOther.gate).toBe('state_limit');
    expect(maOnOther.reason).toContain('MA-940CMR7.04');
  });

  it('keeps the postal code’s state beside a stated one', () => {
    const both = { ...comms(2), areaCodeState: 'CA', ...contact({ usState: 'NH', postalState: 'MA' }) };
    expect(jurisdictionsOf(facts(both), '+16175550123').states).toEqual(['CA', 'MA', 'NH']);
    expect(decide(request(), facts(both), NOON_NY).gate).toBe('state_limit');
  });

  it('applies every cap, the strictest binding, when nothing places a US number', () => {
    const nowhere = { areaCodeState: null, numberZones: ['America/New_York'] };
    const where = jurisdictionsOf(facts(nowhere), '+16175550123');
    expect(where.unknown).toBe(true);
    const d = decide(request(), facts({ ...comms(2), ...nowhere }), inForce);
    expect(d.gate).toBe('state_limit');
    expect(d.reason).toContain('every cap applies');
    expect(decide(request(), facts({ ...comms(1), ...nowhere }), inForce).gate).toBeNull();
    expect(jurisdictionsOf(facts(nowhere), '+525512345678').unknown).toBe(false);
  });

  it('counts the previous system’s reported calls toward the caps', () => {
    const ma = { areaCodeState: 'MA' };
    expect(decide(request(), facts({ ...ma, counts: { ...NO_COUNTS, debt7d: 1, priorDebt7d: 1 } }), NOON_NY).gate).toBe('state_limit');
    const wa = { ...contact({ usState: 'WA' }), areaCodeState: 'WA', numberZones: ['America/Los_Angeles'] };
    expect(decide(request(), facts({ ...wa, counts: { ...NO_COUNTS, consumer7d: 1, priorConsumer7d: 2 } }), new Date('2026-06-15T18:00:00Z')).gate).toBe('state_limit');
  });
});

describe('reassigned numbers', () => {
  it('refuses when the number was disconnected on or after the date the consumer gave it', () => {
    expect(decide(request(), facts({ reassignedOn: '2026-01-10' }), NOON_NY).gate).toBe('number_reassigned');
    expect(decide(request(), facts({ reassignedOn: '2026-03-01' }), NOON_NY).gate).toBe('number_reassigned');
  });

  it('passes when the disconnection predates the date the consumer gave the number', () => {
    expect(decide(request(), facts({ reassignedOn: '2025-12-31' }), NOON_NY).gate).toBeNull();
  });

  it('never takes an import’s time for the consent date', () => {
    const imported = { source: 'import', grantedAt: new Date('2026-11-10T00:00:00Z'), givenOn: null, revokedAt: null, revokedSource: null };
    const d = decide(request(), facts({ consent: imported, reassignedOn: '2023-04-01' }), NOON_NY);
    expect(d.gate).toBe('number_reassigned');
    expect(d.reason).toContain('not on record');
    const given = decide(request(), facts({ consent: { ...imported, givenOn: '2020-05-01' }, reassignedOn: '2023-04-01' }), NOON_NY);
    expect(given.gate).toBe('number_reassigned');
    expect(decide(request(), facts({ consent: { ...imported, givenOn: '2024-01-01' }, reassignedOn: '2023-04-01' }), NOON_NY).gate).toBeNull();
    const direct = { ...imported, source: 'sms_start', grantedAt: new Date('2026-02-01T00:00:00Z') };
    expect(decide(request(), facts({ consent: direct, reassignedOn: '2023-04-01' }), NOON_NY).gate).toBeNull();
  });

  it('refuses an exempt call to a disconnected number when there is no consent date to compare', () => {
    const d = decide(request({ initiation: 'human' }), facts({ consent: null, humanInitiatedEnabled: true, reassignedOn: '2020-01-01' }), NOON_NY);
    expect(d.gate).toBe('number_reassigned');
  });
});

describe('tenant policy', () => {
  const policy = (over: Partial<typeof DEFAULT_POLICY>) => ({ policy: { ...DEFAULT_POLICY, ...over } });

  it.each(['paid', 'settled', 'disputed', 'closed'])('refuses a %s debt by default', (state) => {
    const d = decide(request(), facts({ debt: { ...facts().debt!, state } }), NOON_NY);
    expect(d.gate).toBe('tenant_policy');
    expect(d.reason).toContain('policy v3');
  });

  it('refuses when the debt is unknown', () => {
    expect(decide(request(), facts({ debt: null }), NOON_NY).checks.find((c) => c.gate === 'tenant_policy')!.outcome).toBe('block');
  });

  it('applies blocked states, allowed line types and a daily cap', () => {
    expect(decide(request(), facts({ ...policy({ blocked_us_states: ['MA'] }), areaCodeState: 'MA' }), NOON_NY).gate).toBe('tenant_policy');
    expect(decide(request(), facts(policy({ allowed_line_types: ['landline'] })), NOON_NY).gate).toBe('tenant_policy');
    expect(decide(request(), facts({ ...policy({ max_calls_per_day: 2 }), counts: { ...facts().counts, debtCalls24h: 2 } }), NOON_NY).gate).toBe('tenant_policy');
    const reported = decide(request(), facts({ ...policy({ max_calls_per_day: 2 }), counts: { ...facts().counts, debtCalls24h: 1, priorDebt24h: 1 } }), NOON_NY);
    expect(reported.gate).toBe('tenant_policy');
    expect(reported.reason).toContain('reported by the previous system');
  });

  it('narrows hours with its own window', () => {
    const narrow = policy({ calling_hours: { start: '13:00', end: '17:00' } });
    expect(decide(request(), facts(narrow), NOON_NY).gate).toBe('tenant_policy');
    expect(decide(request(), facts(narrow), new Date('2026-06-15T18:00:00Z')).gate).toBeNull();
  });

  it('applies an opted-in unconfirmed rule only when opted in', () => {
    const ny = { contact: { ...facts().contact!, usState: 'NY' }, areaCodeState: 'NY', counts: { ...facts().counts, debt7d: 3 } };
    expect(decide(request(), facts(ny), NOON_NY).gate).toBeNull();
    expect(decide(request(), facts({ ...ny, ...policy({ unconfirmed_rules: ['NYS-DFS-23NYCRR1-PROPOSED'] }) }), NOON_NY).gate).toBe('tenant_policy');
  });

  it('refuses an artificial-voice call without a valid stored disclosure', () => {
    expect(decide(request({ artificialVoice: true }), facts({ disclosureValid: null }), NOON_NY).gate).toBe('tenant_policy');
    expect(decide(request({ artificialVoice: true }), facts({ disclosureValid: false }), NOON_NY).gate).toBe('tenant_policy');
    expect(decide(request({ artificialVoice: true }), facts({ disclosureValid: true }), NOON_NY).gate).toBeNull();
  });
});

describe('chain order', () => {
  it('reports the first refusing gate in chain order when several refuse', () => {
    const everything: Partial<DecisionFacts> = {
      consent: null,
      dncSources: ['api'],
      debt: { ...facts().debt!, ceaseAndDesistAt: new Date('2026-01-01'), state: 'paid' },
      counts: { ...NO_COUNTS, regfCalls7d: 9, debt7d: 9, debt30d: 9, consumer7d: 9, debtCalls24h: 9 },
      lastConversationAt: new Date('2026-06-15T13:00:00Z'),
      reassignedOn: '2026-06-01',
      areaCodeState: 'MA',
    };
    const late = new Date('2026-06-16T03:00:00Z'); // 23:00 EDT
    const sequence: Gate[] = [];
    let current = { ...everything };
    const removals: Record<Gate, Partial<DecisionFacts>> = {
      tcpa_no_consent: { consent: { source: 'import', grantedAt: new Date('2026-01-01'), givenOn: '2026-01-01', revokedAt: new Date('2026-02-01'), revokedSource: 'x' } },
      consent_revoked: { consent: facts().consent },
      dnc_listed: { dncSources: [] },
      cease_and_desist: { debt: { ...facts().debt!, state: 'paid' } },
      quiet_hours: {},
      regf_7in7: { counts: { ...everything.counts!, regfCalls7d: 0 } },
      regf_post_contact: { lastConversationAt: null },
      state_limit: { areaCodeState: 'CA' },
      number_reassigned: { reassignedOn: null },
      tenant_policy: { debt: facts().debt },
    };
    let now = late;
    for (let i = 0; i < GATE_CHAIN.length; i += 1) {
      const d = decide(request(), facts(current), now);
      if (d.allowed) break;
      sequence.push(d.gate!);
      if (d.gate === 'quiet_hours') now = new Date('2026-06-15T16:00:00Z');
      current = { ...current, ...removals[d.gate!] };
    }
    expect(sequence).toEqual([...GATE_CHAIN]);
  });
});

describe('insideWindow', () => {
  it('handles windows that run past midnight', () => {
    expect(insideWindow(23 * 60, 22 * 60, 2 * 60)).toBe(true);
    expect(insideWindow(60, 22 * 60, 2 * 60)).toBe(true);
    expect(insideWindow(12 * 60, 22 * 60, 2 * 60)).toBe(false);
  });
});
