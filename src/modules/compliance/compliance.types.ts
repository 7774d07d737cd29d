/** The gate vocabulary (SPEC "What the service does" item 5), in chain order. */
export const GATE_CHAIN = [
  'tcpa_no_consent',
  'consent_revoked',
  'dnc_listed',
  'cease_and_desist',
  'quiet_hours',
  'regf_7in7',
  'regf_post_contact',
  'state_limit',
  'number_reassigned',
  'tenant_policy',
] as const;

export type Gate = (typeof GATE_CHAIN)[number];
export type Channel = 'voice' | 'sms';

/** What is about to happen: one call or one text to one number about one debt. */
export interface DecisionRequest {
  debtId: string;
  /** E.164. */
  phone: string;
  channel: Channel;
  campaignId: string | null;
  /** `human`: a live preview/manual/CTI dial placed by an agent; `automated`: the dialer or an API text. */
  initiation: 'automated' | 'human';
  /** Prerecorded, TTS or AI voice on the call (FCC 24-17: AI voices are artificial). */
  artificialVoice: boolean;
  /** Destination zone supplied by the caller (SMS send), judged with every other zone the consumer could be in. */
  timezone?: string | null;
  /**
   * A re-check of a call already in progress (unhold): the engine judges that call, not a new
   * attempt, so the call itself and the conversation it holds are left out of the counts.
   */
  ongoingCallAttemptId?: string | null;
}

export interface DebtFacts {
  id: string;
  state: string;
  debtType: string;
  consumerRef: string;
  ceaseAndDesistAt: Date | null;
}

export interface ContactFacts {
  lineType: string | null;
  timezone: string | null;
  usState: string | null;
  city: string | null;
  postalCode: string | null;
  /** The state the postal code lies in (resolved at import). */
  postalState: string | null;
  nycBorough: string | null;
}

/** Where one of the consumer's addresses places them (every contact of every debt of the consumer). */
export interface PlaceFacts {
  usState: string | null;
  postalState: string | null;
  city: string | null;
  nycBorough: string | null;
}

export interface ConsentFacts {
  source: string;
  grantedAt: Date;
  /** The date the consumer gave the number (YYYY-MM-DD), when the import knew it. */
  givenOn: string | null;
  revokedAt: Date | null;
  revokedSource: string | null;
}

export interface CampaignFacts {
  campaignType: string;
  callingWindowStart: string | null;
  callingWindowEnd: string | null;
  defaultTimezone: string | null;
  destinationLocal: boolean;
}

/** Communications already made, counted per unit and window (calls from the CDR, texts a provider accepted from the SMS ledger). */
export interface CommunicationCounts {
  /** Placed calls in the last 7 × 24 h for the Reg F unit (the debt, or its student-loan group). */
  regfCalls7d: number;
  /** Calls the previous system reported for the last 7 days (prior_attempts_7d), still in window. */
  priorAttempts7d: number;
  /** Calls and texts about this debt in the last 7 and 30 days (state caps per debt). */
  debt7d: number;
  debt30d: number;
  /** Calls and texts to this consumer about any debt in the last 7 days (state caps per debtor). */
  consumer7d: number;
  /** Placed calls about this debt in the last 24 h (tenant policy). */
  debtCalls24h: number;
  /**
   * Calls the previous system reported (prior_attempts_7d) that may fall in each window: a report
   * made at R covers calls in [R - 7 days, R], so it counts toward every window R lies in.
   */
  priorDebt7d: number;
  priorDebt30d: number;
  priorConsumer7d: number;
  priorDebt24h: number;
}

/** Everything one decision reads: loaded by one query, enriched with phone metadata. */
export interface DecisionFacts {
  humanInitiatedEnabled: boolean;
  debt: DebtFacts | null;
  contact: ContactFacts | null;
  /** Every address on record for the consumer (all contacts of all their debts). */
  places: PlaceFacts[];
  consent: ConsentFacts | null;
  dncSources: string[];
  counts: CommunicationCounts;
  /** Latest conversation on the Reg F unit, from the conversation ledger. */
  lastConversationAt: Date | null;
  /** Latest permanent disconnection of the number (YYYY-MM-DD), from reassigned-numbers imports. */
  reassignedOn: string | null;
  campaign: CampaignFacts | null;
  policyVersion: number;
  policy: import('./compliance.policy').CompliancePolicy;
  /** Whether the tenant's artificial-voice disclosure passes the content check (null: none stored). */
  disclosureValid: boolean | null;
  /** Zones the number could be in and its area code's state, from phone-number metadata. */
  numberZones: string[];
  areaCodeState: string | null;
  /** The number is in a non-geographic NANP area code (CONTRACT section 12): it has no zone of its own. */
  numberNonGeographic: boolean;
}

export type CheckOutcome = 'pass' | 'block' | 'exempt' | 'not_applicable';

export interface GateCheck {
  gate: Gate;
  outcome: CheckOutcome;
  detail: string;
  citations: string[];
}

export interface Decision {
  allowed: boolean;
  /** The first refusing gate in chain order; null when allowed. */
  gate: Gate | null;
  reason: string | null;
  /** Every gate's evaluation, in chain order (the evidence of what was checked). */
  checks: GateCheck[];
  /** The zones quiet hours were judged in. */
  zones: string[];
  rulesVersion: string;
  policyVersion: number;
  evaluatedAt: string;
}
