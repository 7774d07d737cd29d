/**
 * Who must consent before a call is recorded, per US state, as data with citations
 * (../shared/REGULATIONS.md §3; status P = primary text read, S = secondary source). Only telephone
 * calls matter here: `phone_all_party` counts as all-party, `in_person_all_party` does not.
 * Changing anything here changes RECORDING_RULES_VERSION, which every recording decision records.
 */
export const RECORDING_RULES_VERSION = '2026-11-24.1';

export type RecordingMode = 'all_party' | 'one_party' | 'phone_all_party' | 'in_person_all_party';

export interface RecordingRule {
  id: string;
  /** Two-letter US state code. */
  state: string;
  mode: RecordingMode;
  /** The consent announcement must itself be on the recording (WA). */
  notice_must_be_recorded: boolean;
  citation: string;
  /** Source ids of REGULATIONS.md's list. */
  source: string;
  status: 'P' | 'S';
  note: string;
}

const rule = (r: RecordingRule): [string, RecordingRule] => [r.state, r];

/** States REGULATIONS.md §3 lists; every other state is one-party, the federal baseline (18 U.S.C. 2511(2)(d)). */
export const RECORDING_RULES: Readonly<Record<string, RecordingRule>> = Object.freeze(
  Object.fromEntries([
    rule({
      id: 'R1',
      state: 'CA',
      mode: 'all_party',
      notice_must_be_recorded: false,
      citation: 'Cal. Penal Code 632, 632.7',
      source: 'S33, S31',
      status: 'P',
      note: 'All parties for confidential calls; 632.7 covers any cellular or cordless call and binds parties too (Smith v. LoanMe, 2021).',
    }),
    rule({ id: 'R2', state: 'FL', mode: 'all_party', notice_must_be_recorded: false, citation: 'Fla. Stat. 934.03', source: 'S31, S32', status: 'S', note: 'All parties.' }),
    rule({
      id: 'R3',
      state: 'IL',
      mode: 'all_party',
      notice_must_be_recorded: false,
      citation: '720 ILCS 5/14-2',
      source: 'S34',
      status: 'S',
      note: 'All parties to private conversations recorded surreptitiously (PA 98-1142, 2014).',
    }),
    rule({ id: 'R4', state: 'MD', mode: 'all_party', notice_must_be_recorded: false, citation: 'Md. Cts. & Jud. Proc. 10-402', source: 'S31', status: 'S', note: 'All parties.' }),
    rule({
      id: 'R5',
      state: 'MA',
      mode: 'all_party',
      notice_must_be_recorded: false,
      citation: 'G.L. c.272 §99',
      source: 'S41',
      status: 'S',
      note: 'Bars secret recording; clear notice defeats secrecy.',
    }),
    rule({
      id: 'R6',
      state: 'MT',
      mode: 'all_party',
      notice_must_be_recorded: false,
      citation: 'MCA 45-8-213',
      source: 'S35',
      status: 'S',
      note: 'All parties must know; a recording warning lets either party record.',
    }),
    rule({ id: 'R7', state: 'NH', mode: 'all_party', notice_must_be_recorded: false, citation: 'RSA 570-A:2', source: 'S41', status: 'S', note: 'All parties.' }),
    rule({ id: 'R8', state: 'PA', mode: 'all_party', notice_must_be_recorded: false, citation: '18 Pa.C.S. 5703-5704', source: 'S31, S41', status: 'S', note: 'All parties.' }),
    rule({
      id: 'R9',
      state: 'WA',
      mode: 'all_party',
      notice_must_be_recorded: true,
      citation: 'RCW 9.73.030(1), (3)',
      source: 'S36',
      status: 'S',
      note: 'All parties; consent through a reasonably effective announcement, and the announcement itself is recorded.',
    }),
    rule({
      id: 'R10',
      state: 'CT',
      mode: 'phone_all_party',
      notice_must_be_recorded: false,
      citation: 'Conn. Gen. Stat. 52-570d',
      source: 'S38',
      status: 'S',
      note: 'Civil all-party rule for telephone calls (criminal side not checked).',
    }),
    rule({
      id: 'R11',
      state: 'MI',
      mode: 'one_party',
      notice_must_be_recorded: false,
      citation: 'MCL 750.539c',
      source: 'S37',
      status: 'P',
      note: 'The statute says all parties, but a participant may record (Sullivan v. Gray, 1982); the collector is a participant.',
    }),
    rule({
      id: 'R12',
      state: 'OR',
      mode: 'in_person_all_party',
      notice_must_be_recorded: false,
      citation: 'ORS 165.540',
      source: 'S39',
      status: 'S',
      note: 'Telephone: a participant may record; in person or video: all must be told.',
    }),
    rule({
      id: 'R13',
      state: 'NV',
      mode: 'phone_all_party',
      notice_must_be_recorded: false,
      citation: 'NRS 200.620, 200.650',
      source: 'S40',
      status: 'S',
      note: 'Telephone all-party (Lane v. Allstate); in person one-party. Applied even though Ditech v. Buckles (2017) spares recordings made outside Nevada: the recording location is the switch, which the product does not pin.',
    }),
  ]),
);

/**
 * States whose sources conflict (REGULATIONS.md R14). They are treated as one-party, like any
 * unlisted state; they are named so a review of the table knows they were looked at.
 */
export const UNCONFIRMED_RECORDING_STATES: readonly string[] = ['DE', 'VT'];

/** Whether a state's rule requires every party's consent for a telephone call. */
export function isAllPartyForPhone(mode: RecordingMode): boolean {
  return mode === 'all_party' || mode === 'phone_all_party';
}

export type ConsumerStateSource = 'area_code' | 'contact_state' | 'postal_code';
export type CallerStateSource = 'did_state' | 'caller_id_area_code';

/** Where each leg of a call may be, as far as the data says. */
export interface CallLegStates {
  consumer: Array<{ source: ConsumerStateSource; state: string | null }>;
  caller: Array<{ source: CallerStateSource; state: string | null }>;
}

export interface AppliedRecordingRule {
  leg: 'consumer' | 'caller';
  source: ConsumerStateSource | CallerStateSource;
  state: string;
  rule_id: string;
  mode: RecordingMode;
  citation: string;
}

export interface RecordingConsentDecision {
  /** The state whose all-party rule applies (null: one-party on both legs). */
  two_party_consent_state: string | null;
  /** Some applicable rule wants the announcement on the recording. */
  notice_must_be_recorded: boolean;
  /** Every all-party rule that applied, both legs, for the evidence. */
  applied: AppliedRecordingRule[];
  rules_version: string;
}

/**
 * Both legs are evaluated (a call is recorded "in" every state a party may be in): when any
 * state either party may be in requires all-party consent for a telephone call, the call is
 * all-party. The state reported is the strictest: one whose rule also wants the notice on the
 * recording, then the consumer's side before the caller's, then in alphabetical order.
 */
export function evaluateRecordingConsent(legs: CallLegStates): RecordingConsentDecision {
  const applied: AppliedRecordingRule[] = [];
  const seen = new Set<string>();
  const visit = (leg: 'consumer' | 'caller', source: ConsumerStateSource | CallerStateSource, raw: string | null) => {
    const state = raw?.trim().toUpperCase();
    if (!state) return;
    const r = RECORDING_RULES[state];
    if (!r || !isAllPartyForPhone(r.mode) || seen.has(`${leg}:${state}`)) return;
    seen.add(`${leg}:${state}`);
    applied.push({ leg, source, state, rule_id: r.id, mode: r.mode, citation: r.citation });
  };
  for (const s of legs.consumer) visit('consumer', s.source, s.state);
  for (const s of legs.caller) visit('caller', s.source, s.state);

  const rank = (a: AppliedRecordingRule) => [RECORDING_RULES[a.state]!.notice_must_be_recorded ? 0 : 1, a.leg === 'consumer' ? 0 : 1] as const;
  const chosen = [...applied].sort((a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    return ra[0] - rb[0] || ra[1] - rb[1] || a.state.localeCompare(b.state);
  })[0];
  return {
    two_party_consent_state: chosen?.state ?? null,
    notice_must_be_recorded: applied.some((a) => RECORDING_RULES[a.state]!.notice_must_be_recorded),
    applied,
    rules_version: RECORDING_RULES_VERSION,
  };
}
