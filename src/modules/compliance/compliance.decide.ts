import { DateTime, IANAZone } from 'luxon';
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
 * A known zone (given with the request, or stored on the contact) is used alone; otherwise every
 * zone the number could be in. An invalid zone name is not "known".
 */
export function destinationZones(request: DecisionRequest, facts: DecisionFacts): string[] {
  if (isValidZone(request.timezone)) return [request.timezone];
  if (isValidZone(facts.contact?.timezone)) return [facts.contact.timezone];
  return facts.numberZones.filter(isValidZone);
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
  if (zones.length === 0) return check('quiet_hours', 'block', 'the destination time zone cannot be resolved', cites);
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

/** The states and the city the consumer can be in: address, postal code and area code, all of them. */
export function jurisdictionsOf(facts: DecisionFacts): { states: string[]; nyc: boolean } {
  const states = new Set<string>();
  const contact = facts.contact;
  if (contact?.usState) states.add(contact.usState.trim().toUpperCase());
  if (facts.areaCodeState) states.add(facts.areaCodeState);
  const nyc =
    !!contact?.nycBorough || (!!contact?.city && NYC_CITY_NAMES.has(contact.city.trim().toLowerCase()) && (!contact.usState || contact.usState.trim().toUpperCase() === 'NY'));
  if (nyc) states.add('NY');
  return { states: [...states].sort(), nyc };
}

function ruleApplies(rule: StateRule, request: DecisionRequest, where: { states: string[]; nyc: boolean }, now: Date): boolean {
  if (!rule.channels.includes(request.channel)) return false;
  if (rule.effectiveFrom && now.toISOString().slice(0, 10) < rule.effectiveFrom) return false;
  return rule.jurisdiction.kind === 'city' ? where.nyc : where.states.includes(rule.jurisdiction.code);
}

function countFor(rule: StateRule, facts: DecisionFacts): number {
  if (rule.unit === 'consumer') return facts.counts.consumer7d;
  return rule.windowDays <= 7 ? facts.counts.debt7d : facts.counts.debt30d;
}

function stateLimitCheck(request: DecisionRequest, facts: DecisionFacts, now: Date): GateCheck {
  const where = jurisdictionsOf(facts);
  const rules = STATE_RULES.filter((r) => ruleApplies(r, request, where, now));
  if (rules.length === 0) {
    return check('state_limit', 'not_applicable', `no state or city cap applies (${where.states.join(', ') || 'no state known'})`);
  }
  for (const rule of rules) {
    const count = countFor(rule, facts);
    if (count >= rule.max) {
      return check('state_limit', 'block', `${rule.id}: ${count} communications in ${rule.windowDays} days, cap ${rule.max}`, [rule.citation]);
    }
  }
  return check('state_limit', 'pass', rules.map((r) => `${r.id}: ${countFor(r, facts)} of ${r.max}`).join('; '), rules.map((r) => r.citation));
}

function reassignedCheck(facts: DecisionFacts): GateCheck {
  const cites = FEDERAL.reassigned.citations;
  if (!facts.reassignedOn) return check('number_reassigned', 'pass', 'no permanent disconnection on record', cites);
  if (!facts.consent) {
    return check('number_reassigned', 'block', `number permanently disconnected on ${facts.reassignedOn}; no consent date to compare`, cites);
  }
  const consentDay = facts.consent.grantedAt.toISOString().slice(0, 10);
  return facts.reassignedOn >= consentDay
    ? check('number_reassigned', 'block', `number permanently disconnected on ${facts.reassignedOn}, on or after consent of ${consentDay}`, cites)
    : check('number_reassigned', 'pass', `last disconnection ${facts.reassignedOn} predates consent of ${consentDay}`, cites);
}

function tenantPolicyCheck(request: DecisionRequest, facts: DecisionFacts, zones: string[], now: Date): GateCheck {
  const policy = facts.policy;
  const version = `policy v${facts.policyVersion}`;
  const block = (detail: string, citations: readonly string[] = []) => check('tenant_policy', 'block', `${version}: ${detail}`, citations);
  if (!facts.debt) return block('the debt does not exist');
  if (policy.non_dialable_debt_states.includes(facts.debt.state as never)) return block(`debt state ${facts.debt.state} is not contactable`);
  const where = jurisdictionsOf(facts);
  const barredState = where.states.find((s) => policy.blocked_us_states.includes(s));
  if (barredState) return block(`consumers in ${barredState} are not contacted`);
  const lineType = facts.contact?.lineType ?? 'unknown';
  if (policy.allowed_line_types && !policy.allowed_line_types.includes(lineType as never)) {
    return block(`line type ${lineType} is not contacted`);
  }
  if (request.channel === 'voice' && policy.max_calls_per_day !== null && facts.counts.debtCalls24h >= policy.max_calls_per_day) {
    return block(`${facts.counts.debtCalls24h} calls in the last 24 hours, policy cap ${policy.max_calls_per_day}`);
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
