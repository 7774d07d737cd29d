/**
 * The regulatory rules the engine applies, as data with their citations (../shared/REGULATIONS.md;
 * status P = primary text read, S = secondary source). Where rules overlap the strictest applies.
 * Changing anything here changes RULES_VERSION, which every decision records.
 */
// .2: a territory's area code places the consumer in that territory (src/lib/phone-geo.ts).
export const RULES_VERSION = '2026-11-27.2';

export const FEDERAL = {
  callingHours: {
    /** Local time of the consumer, [start, end). */
    startMinute: 8 * 60,
    endMinute: 21 * 60,
    citations: ['15 U.S.C. 1692c(a)(1)', '12 CFR 1006.6(b)(1)(i)'],
  },
  regf7in7: {
    /** A call is refused when this many calls already fall in the window (the 8th would exceed 7). */
    maxCalls: 7,
    windowHours: 7 * 24,
    citations: ['12 CFR 1006.14(b)(2)(i)(A)', '12 CFR 1006.14(b)(3)'],
  },
  regfPostContact: {
    /** The conversation date is day 1: calls are refused on local dates D through D+6. */
    blockedDays: 7,
    citations: ['12 CFR 1006.14(b)(2)(i)(B)'],
  },
  consent: { citations: ['47 CFR 64.1200(a)(1)(iii)', 'FCC 07-232 ¶¶9-10', '47 CFR 64.1200(a)(10)-(12)'] },
  dnc: { citations: ['47 CFR 64.1200(d)', '12 CFR 1006.14(h)(1)'] },
  ceaseAndDesist: { citations: ['15 U.S.C. 1692c(c)'] },
  reassigned: { citations: ['47 CFR 64.1200(m)'] },
  artificialVoice: { citations: ['47 CFR 64.1200(b)(1)-(2)', 'FCC 24-17'] },
  /** Texts are not calls for Reg F's frequency presumptions (but are communications for state caps). */
  regfChannels: ['voice'] as const,
} as const;

export type Jurisdiction = { kind: 'state'; code: string } | { kind: 'city'; code: 'NYC' };

export interface StateRule {
  id: string;
  jurisdiction: Jurisdiction;
  /** At most this many communications in the window; the next one is refused. */
  max: number;
  windowDays: number;
  /** Per debt (account), or per debtor across debts. */
  unit: 'debt' | 'consumer';
  channels: readonly ('voice' | 'sms')[];
  effectiveFrom: string | null;
  citation: string;
  status: 'P' | 'S';
  note: string;
}

/**
 * State and city per-debt caps collectors must honour. Location class (residence or cell versus
 * elsewhere) is not known for imported numbers, so every number is treated as the consumer's
 * personal number, which selects the per-7-day caps.
 */
export const STATE_RULES: readonly StateRule[] = [
  {
    id: 'MA-940CMR7.04',
    jurisdiction: { kind: 'state', code: 'MA' },
    max: 2,
    windowDays: 7,
    unit: 'debt',
    channels: ['voice', 'sms'],
    effectiveFrom: null,
    citation: '940 CMR 7.04(1)(f); 209 CMR 18.16(1)(d)',
    status: 'P',
    note: 'Two communications per 7 days to residence, cell or personal number, per debt; unanswered calls count (Armata v. Target).',
  },
  {
    id: 'WA-RCW19.16.250',
    jurisdiction: { kind: 'state', code: 'WA' },
    max: 3,
    windowDays: 7,
    unit: 'consumer',
    channels: ['voice', 'sms'],
    effectiveFrom: null,
    citation: 'RCW 19.16.250',
    status: 'S',
    note: 'More than three communications a week to the debtor is presumed harassment.',
  },
  {
    id: 'NYC-6RCNY5-77',
    jurisdiction: { kind: 'city', code: 'NYC' },
    max: 3,
    windowDays: 7,
    unit: 'debt',
    channels: ['voice', 'sms'],
    effectiveFrom: '2026-09-01',
    citation: '6 RCNY 5-77',
    status: 'S',
    note: 'At most three contacts or attempts per 7 days per account, all media; applies city-wide (all five boroughs).',
  },
];

/**
 * Rules whose text could not be confirmed. They never apply by default; a tenant may opt in
 * through its compliance policy (`unconfirmed_rules`).
 */
export const UNCONFIRMED_RULES: readonly StateRule[] = [
  {
    id: 'NYS-DFS-23NYCRR1-PROPOSED',
    jurisdiction: { kind: 'state', code: 'NY' },
    max: 3,
    windowDays: 7,
    unit: 'debt',
    channels: ['voice'],
    effectiveFrom: null,
    citation: '23 NYCRR 1 (proposed amendment)',
    status: 'S',
    note: 'Proposed cap of one call plus three attempts per 7 days, reported paused in 2023; applied as three calls per 7 days.',
  },
];

/** City names that place an address inside New York City when no postal code resolves it. */
export const NYC_CITY_NAMES = new Set(['new york', 'new york city', 'nyc', 'manhattan', 'brooklyn', 'queens', 'bronx', 'the bronx', 'staten island']);

/** Campaign types whose calls carry an artificial or prerecorded voice. */
export const ARTIFICIAL_VOICE_TYPES = new Set(['tts_blast', 'tts_ivr', 'ivr_cascade', 'survey', 'ai_voice']);
