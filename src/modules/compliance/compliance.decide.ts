import { DateTime, IANAZone } from 'luxon';
import { zonesOfState } from '../../lib/us-state-zones';
import { FEDERAL, NYC_CITY_NAMES, RULES_VERSION, STATE_RULES, UNCONFIRMED_RULES, type StateRule } from './compliance.rules';
import type { Decision, DecisionFacts, DecisionRequest, Gate, GateCheck } from './compliance.types';
import { GATE_CHAIN } from './compliance.types';

/**
 * The decision: a pure function of the request, the facts one query loaded and the clock. Every
 * gate is evaluated (the evidence shows all of them); the answer is the first refusal in chain
 * order. Anything it cannot establish counts against the call: an unknown zone, a window without
 * a zone, a missing consent.
 */
export function decide(request: DecisionRequest, facts: DecisionFacts, now: Date): Decision {
  const zones = destinationZones(request, facts);
  const checks: GateCheck[] = [
    ...consentChecks(request, facts),
    ...doNotCallChecks(facts),
    quietHoursCheck(request, facts, zones, now),
    regf7in7Check(request, facts),
    regfPostContactCheck(request, facts, zones, now),
    stateLimitCheck(request, facts, now),
    reassignedCheck(facts),
    tenantPolicyCheck(request, facts, zones, now),
  ];
  checks.sort((a, b) => GATE_CHAIN.indexOf(a.gate) - GATE_CHAIN.indexOf(b.gate));
  const refusal = checks.find((c) => c.outcome === 'block') ?? null;
  return {
    allowed: refusal === null,
    gate: refusal?.gate ?? null,
    reason: refusal?.detail ?? null,
    checks,
    zones,
    rulesVersion: RULES_VERSION,
    policyVersion: facts.policyVersion,
    evaluatedAt: now.toISOString(),
  };
}

const check = (gate: Gate, outcome: GateCheck['outcome'], detail: string, citations: readonly string[] = []): GateCheck => ({
  gate,
  outcome,
  detail,
  citations: [...citations],
});

// Luxon builds an Intl formatter to validate a zone (about 60 µs); the zone set is small and fixed.
const zoneValidity = new Map<string, boolean>();

export function isValidZone(zone: string | null | undefined): zone is string {
  if (typeof zone !== 'string' || zone.length === 0 || zone.length > 64) return false;
  let valid = zoneValidity.get(zone);
  if (valid === undefined) {
    valid = IANAZone.isValidZone(zone);
    if (zoneValidity.size < 1000) zoneValidity.set(zone, valid);
  }
  return valid;
}

/**
 * Every zone the consumer could be in, all of which must be inside the calling hours: a zone given
 * with the request or stored on the contact, the zones of the number's area code, and the zones of
 * the contact's state and postal-code state. A stored zone never hides what the area code or the
 * address says (a New York zone on an 808 number is judged in Honolulu too). A number in a
 * non-geographic area code has no zone of its own (CONTRACT section 12): with no zone given or
 * stored it is unresolvable (empty). An invalid zone name is not known.
 */
export function destinationZones(request: DecisionRequest, facts: DecisionFacts): string[] {
  const stated = [request.timezone, facts.contact?.timezone].filter(isValidZone);
  if (facts.numberNonGeographic && stated.length === 0) return [];
  const zones = new Set<string>(stated);
  if (!facts.numberNonGeographic) for (const z of facts.numberZones) zones.add(z);
  for (const z of [...zonesOfState(facts.contact?.usState), ...zonesOfState(facts.contact?.postalState)]) zones.add(z);
  return [...zones].filter(isValidZone).sort();
}

function consentChecks(request: DecisionRequest, facts: DecisionFacts): GateCheck[] {
  const cites = FEDERAL.consent.citations;
  const exempt =
    request.channel === 'voice' && request.initiation === 'human' && !request.artificialVoice && facts.humanInitiatedEnabled;
  if (exempt) {
    const detail = 'human-initiated live call without artificial voice; the tenant enables the exemption';
    return [check('tcpa_no_consent', 'exempt', detail, cites), check('consent_revoked', 'exempt', detail, cites)];
  }
  if (!facts.consent) {
    return [
      check('tcpa_no_consent', 'block', `no prior express consent on record for this number and debt (${request.channel})`, cites),
      check('consent_revoked', 'not_applicable', 'no consent to revoke', cites),
    ];
  }
  const granted = `consent from ${facts.consent.source} on ${facts.consent.grantedAt.toISOString()}`;
  if (facts.consent.revokedAt) {
    return [
      check('tcpa_no_consent', 'pass', granted, cites),
      check(
        'consent_revoked',
        'block',
        `consent revoked on ${facts.consent.revokedAt.toISOString()} (${facts.consent.revokedSource ?? 'unknown source'})`,
        cites,
      ),
    ];
  }
  return [check('tcpa_no_consent', 'pass', granted, cites), check('consent_revoked', 'pass', 'consent not revoked', cites)];
}

function doNotCallChecks(facts: DecisionFacts): GateCheck[] {
  const dnc =
    facts.dncSources.length > 0
      ? check('dnc_listed', 'block', `number is on the internal do-not-call list (${[...facts.dncSources].sort().join(', ')})`, FEDERAL.dnc.citations)
      : check('dnc_listed', 'pass', 'number is not on the internal do-not-call list', FEDERAL.dnc.citations);
  const cad = facts.debt?.ceaseAndDesistAt
    ? check('cease_and_desist', 'block', `cease-and-desist received ${facts.debt.ceaseAndDesistAt.toISOString()}`, FEDERAL.ceaseAndDesist.citations)
    : check('cease_and_desist', 'pass', 'no cease-and-desist on the debt', FEDERAL.ceaseAndDesist.citations);
  return [dnc, cad];
}

/** Minutes since local midnight (with seconds as a fraction) of an instant in a zone. */
function localMinute(now: Date, zone: string): number {
  const local = DateTime.fromJSDate(now, { zone });
  return local.hour * 60 + local.minute + local.second / 60;
}

/** Minutes since midnight of HH:MM or HH:MM:SS (seconds as a fraction: windows are exact to the second). */
export function parseHhmm(value: string): number {
  const [h, m, sec] = value.split(':');
  return Number(h) * 60 + Number(m) + Number(sec ?? 0) / 60;
}

/** [start, end) in minutes; a window whose end is before its start runs past midnight. */
export function insideWindow(minute: number, start: number, end: number): boolean {
  return start <= end ? minute >= start && minute < end : minute >= start || minute < end;
}

function quietHoursCheck(request: DecisionRequest, facts: DecisionFacts, zones: string[], now: Date): GateCheck {
  const cites = FEDERAL.callingHours.citations;
  if (zones.length === 0) {
    const detail = facts.numberNonGeographic
      ? 'the number is in a non-geographic area code (toll-free, personal or premium) and no timezone was given or is on record: its zone is unresolvable'
      : 'the destination time zone cannot be resolved';
    return check('quiet_hours', 'block', detail, cites);
  }
  const { startMinute, endMinute } = FEDERAL.callingHours;
  const closed = zones.filter((z) => !insideWindow(localMinute(now, z), startMinute, endMinute));
  if (closed.length > 0) {
    return check('quiet_hours', 'block', `outside 08:00-21:00 local time in ${closed.join(', ')}`, cites);
  }
  const campaign = facts.campaign;
  if (campaign?.callingWindowStart && campaign.callingWindowEnd) {
    const start = parseHhmm(campaign.callingWindowStart);
    const end = parseHhmm(campaign.callingWindowEnd);
    const windowZones = campaign.destinationLocal ? zones : campaign.defaultTimezone ? [campaign.defaultTimezone] : [];
    if (windowZones.length === 0 || !windowZones.every(isValidZone)) {
      return check('quiet_hours', 'block', 'the campaign calling window has no valid time zone to be read in', cites);
    }
    const shut = windowZones.filter((z) => !insideWindow(localMinute(now, z), start, end));
    if (shut.length > 0) {
      return check('quiet_hours', 'block', `outside the campaign window ${campaign.callingWindowStart}-${campaign.callingWindowEnd} in ${shut.join(', ')}`, cites);
    }
  }
  return check('quiet_hours', 'pass', `inside 08:00-21:00 local time in ${zones.join(', ')}`, cites);
}

function regf7in7Check(request: DecisionRequest, facts: DecisionFacts): GateCheck {
  const cites = FEDERAL.regf7in7.citations;
  if (request.channel !== 'voice') return check('regf_7in7', 'not_applicable', 'texts do not count toward the call-frequency presumption', cites);
  const placed = facts.counts.regfCalls7d + facts.counts.priorAttempts7d;
  const detail = `${facts.counts.regfCalls7d} calls placed and ${facts.counts.priorAttempts7d} reported by the previous system in the last 7 days`;
  return placed >= FEDERAL.regf7in7.maxCalls ? check('regf_7in7', 'block', detail, cites) : check('regf_7in7', 'pass', detail, cites);
}

/**
 * Zones used for calendar-day rules when none resolves: every UTC offset in use (-12:00 to +14:00
 * in quarter hours). The extremes alone are not enough: the local date difference between two
 * instants depends on the offset.
 */
const EVERY_OFFSET: string[] = Array.from({ length: (26 * 60) / 15 + 1 }, (_, i) => {
  const minutes = -12 * 60 + i * 15;
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `UTC${sign}${Math.floor(abs / 60)}:${String(abs % 60).padStart(2, '0')}`;
});

function regfPostContactCheck(request: DecisionRequest, facts: DecisionFacts, zones: string[], now: Date): GateCheck {
  const cites = FEDERAL.regfPostContact.citations;
  if (request.channel !== 'voice') return check('regf_post_contact', 'not_applicable', 'applies to telephone calls', cites);
  const conversation = facts.lastConversationAt;
  if (!conversation) return check('regf_post_contact', 'pass', 'no telephone conversation on record', cites);
  const judged = zones.length > 0 ? zones : EVERY_OFFSET;
  const blockedIn = judged.filter((zone) => {
    const day1 = DateTime.fromJSDate(conversation, { zone }).startOf('day');
    const today = DateTime.fromJSDate(now, { zone }).startOf('day');
    return today < day1.plus({ days: FEDERAL.regfPostContact.blockedDays });
  });
  const detail = `telephone conversation on ${conversation.toISOString()}; blocked through day 7 counting that day as day 1`;
  return blockedIn.length > 0
    ? check('regf_post_contact', 'block', `${detail} (${blockedIn.join(', ')})`, cites)
    : check('regf_post_contact', 'pass', detail, cites);
}

const isNycCity = (city: string | null, state: string | null): boolean =>
  !!city && NYC_CITY_NAMES.has(city.trim().toLowerCase()) && (!state || state.trim().toUpperCase() === 'NY');

/**
 * The states and the city the consumer can be in: every address on record for the consumer (each
 * contact's state, its postal code's state and borough, its city), and the dialed number's area
 * code, all of them. `unknown` when nothing places a US number anywhere: then every cap applies,
 * the strictest binding, as quiet hours judge an unknown zone in every zone.
 */
export function jurisdictionsOf(facts: DecisionFacts, phone: string): { states: string[]; nyc: boolean; unknown: boolean } {
  const states = new Set<string>();
  let nyc = false;
  const places = [...facts.places, ...(facts.contact ? [facts.contact] : [])];
  for (const place of places) {
    const state = place.usState?.trim().toUpperCase() || null;
    if (state) states.add(state);
    if (place.postalState) states.add(place.postalState);
    if (place.nycBorough || isNycCity(place.city, state)) nyc = true;
  }
  if (facts.areaCodeState) states.add(facts.areaCodeState);
  if (nyc) states.add('NY');
  const unknown = states.size === 0 && phone.startsWith('+1');
  return { states: [...states].sort(), nyc, unknown };
}

function ruleApplies(rule: StateRule, request: DecisionRequest, where: { states: string[]; nyc: boolean; unknown: boolean }, now: Date): boolean {
  if (!rule.channels.includes(request.channel)) return false;
  if (rule.effectiveFrom && now.toISOString().slice(0, 10) < rule.effectiveFrom) return false;
  if (where.unknown) return true;
  return rule.jurisdiction.kind === 'city' ? where.nyc : where.states.includes(rule.jurisdiction.code);
}

/** Communications in a rule's window, the previous system's reported calls included. */
function countFor(rule: StateRule, facts: DecisionFacts): number {
  const c = facts.counts;
  if (rule.unit === 'consumer') return c.consumer7d + c.priorConsumer7d;
  return rule.windowDays <= 7 ? c.debt7d + c.priorDebt7d : c.debt30d + c.priorDebt30d;
}

function stateLimitCheck(request: DecisionRequest, facts: DecisionFacts, now: Date): GateCheck {
  const where = jurisdictionsOf(facts, request.phone);
  const rules = STATE_RULES.filter((r) => ruleApplies(r, request, where, now));
  if (rules.length === 0) {
    return check('state_limit', 'not_applicable', `no state or city cap applies (${where.states.join(', ') || 'no state known'})`);
  }
  const scope = where.unknown ? 'no address or area code places the consumer: every cap applies; ' : '';
  for (const rule of rules) {
    const count = countFor(rule, facts);
    if (count >= rule.max) {
      return check('state_limit', 'block', `${scope}${rule.id}: ${count} communications in ${rule.windowDays} days, cap ${rule.max}`, [rule.citation]);
    }
  }
  return check('state_limit', 'pass', scope + rules.map((r) => `${r.id}: ${countFor(r, facts)} of ${r.max}`).join('; '), rules.map((r) => r.citation));
}

/**
 * The consent's real date: when the consumer gave the number. An import's consent carries it only
 * when the import said so (contacts[].consent_given_on); the import time is not that date, so an
 * import consent without it has no date to compare. Other sources are granted when given.
 */
function consentDate(consent: NonNullable<DecisionFacts['consent']>): string | null {
  if (consent.givenOn) return consent.givenOn;
  return consent.source === 'import' ? null : consent.grantedAt.toISOString().slice(0, 10);
}

function reassignedCheck(facts: DecisionFacts): GateCheck {
  const cites = FEDERAL.reassigned.citations;
  if (!facts.reassignedOn) return check('number_reassigned', 'pass', 'no permanent disconnection on record', cites);
  const given = facts.consent ? consentDate(facts.consent) : null;
  if (!given) {
    return check('number_reassigned', 'block', `number permanently disconnected on ${facts.reassignedOn}; the date the consumer gave the number is not on record`, cites);
  }
  return facts.reassignedOn >= given
    ? check('number_reassigned', 'block', `number permanently disconnected on ${facts.reassignedOn}, on or after consent given on ${given}`, cites)
    : check('number_reassigned', 'pass', `last disconnection ${facts.reassignedOn} predates consent given on ${given}`, cites);
}

function tenantPolicyCheck(request: DecisionRequest, facts: DecisionFacts, zones: string[], now: Date): GateCheck {
  const policy = facts.policy;
  const version = `policy v${facts.policyVersion}`;
  const block = (detail: string, citations: readonly string[] = []) => check('tenant_policy', 'block', `${version}: ${detail}`, citations);
  if (!facts.debt) return block('the debt does not exist');
  if (policy.non_dialable_debt_states.includes(facts.debt.state as never)) return block(`debt state ${facts.debt.state} is not contactable`);
  const where = jurisdictionsOf(facts, request.phone);
  const barredState = where.states.find((s) => policy.blocked_us_states.includes(s));
  if (barredState) return block(`consumers in ${barredState} are not contacted`);
  const lineType = facts.contact?.lineType ?? 'unknown';
  if (policy.allowed_line_types && !policy.allowed_line_types.includes(lineType as never)) {
    return block(`line type ${lineType} is not contacted`);
  }
  const calls24h = facts.counts.debtCalls24h + facts.counts.priorDebt24h;
  if (request.channel === 'voice' && policy.max_calls_per_day !== null && calls24h >= policy.max_calls_per_day) {
    return block(`${calls24h} calls in the last 24 hours (${facts.counts.priorDebt24h} reported by the previous system), policy cap ${policy.max_calls_per_day}`);
  }
  if (policy.calling_hours) {
    const start = parseHhmm(policy.calling_hours.start);
    const end = parseHhmm(policy.calling_hours.end);
    const shut = zones.filter((z) => !insideWindow(localMinute(now, z), start, end));
    if (zones.length === 0 || shut.length > 0) return block(`outside the policy hours ${policy.calling_hours.start}-${policy.calling_hours.end}`);
  }
  for (const rule of UNCONFIRMED_RULES.filter((r) => policy.unconfirmed_rules.includes(r.id))) {
    if (ruleApplies(rule, request, where, now) && countFor(rule, facts) >= rule.max) {
      return block(`${rule.id} (opted in): ${countFor(rule, facts)} in ${rule.windowDays} days, cap ${rule.max}`, [rule.citation]);
    }
  }
  if (request.channel === 'voice' && request.artificialVoice && facts.disclosureValid !== true) {
    return block('an artificial-voice call needs a stored disclosure that identifies the voice as automated', FEDERAL.artificialVoice.citations);
  }
  return check('tenant_policy', 'pass', `${version}: no policy rule refuses`);
}
