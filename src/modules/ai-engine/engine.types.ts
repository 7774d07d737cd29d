/**
 * The conversation engine contract for voice-AI debt-collection calls (docs/ai-engine.md).
 *
 * Every engine implements ConversationEngine, so the deterministic rule-based engine shipped here
 * (rule-engine.ts) can later be replaced by a model-backed one without touching its callers:
 *
 *   start(context)                                   → Turn   (the greeting)
 *   respond(state, consumerUtterance, elapsedSeconds) → Turn   (one consumer turn)
 *
 * - A Turn's `state` is plain JSON (no classes, dates or undefined-only shapes): it is stored in
 *   Temporal workflow state and in a database row, and handed back unchanged on the next turn.
 *   The engine never mutates the state it is given. The state carries the conversation context
 *   MINUS the verification facts (account_number, ssn_last4, dob, pin, zip): only the normalized expected answer of
 *   the configured factor is kept, and it is erased as soon as verification succeeds or fails.
 *   It still holds debt details (balance, creditor), so it is server-side data, never an API body.
 * - Deterministic: the same context and the same utterances with the same elapsed times give the
 *   same turns. There is no clock and no randomness; time comes in as `elapsedSeconds`.
 * - `say` is what the agent speaks, in order. Every sentence has passed the output guard
 *   (guard.ts) last, so no policy-prohibited or FDCPA-prohibited phrase is ever in it.
 * - `outcome` is null while the conversation goes on and set on the turn that ends it. A
 *   respond() on an ended state answers an empty turn with the same outcome.
 * - Engines never throw on consumer input: anything unrecognized is a reprompt.
 */

import type { CONSULT_EXPOSE, CONSULT_FACTORS, DOB_FORMATS } from '../campaigns/campaign.rules';

export type EngineLanguage = 'en' | 'es';

export type TakePayments = 'none' | 'card_on_file';

export interface AgentPolicy {
  /** Largest discount off the balance a lump-sum settlement may give, in percent (0..100). */
  max_settlement_pct: number;
  /** Smallest single payment or installment the agent may accept. */
  min_payment_cents: number;
  max_plan_months: number;
  take_payments: TakePayments;
  /** Phrases never to be spoken (case- and accent-insensitive substrings). */
  prohibited: string[];
}

export const HANDOFF_TRIGGERS = ['keywords', 'negative_sentiment', 'payment_over', 'human_requested'] as const;
export const HANDOFF_ACTIONS = ['transfer', 'offer_human', 'confirm_human'] as const;
export const HANDOFF_SEVERITIES = ['hard', 'soft'] as const;
export type HandoffTrigger = (typeof HANDOFF_TRIGGERS)[number];
export type HandoffAction = (typeof HANDOFF_ACTIONS)[number];
export type HandoffSeverity = (typeof HANDOFF_SEVERITIES)[number];

/** An AiAgent handoff rule (SPEC shape). `params` is read defensively: a malformed rule never fires. */
export interface HandoffRule {
  id: string | null;
  trigger: HandoffTrigger;
  params: Record<string, unknown>;
  action: HandoffAction;
  severity: HandoffSeverity;
  locked: boolean;
}

export type ConsultFactor = (typeof CONSULT_FACTORS)[number];
export type ExposableFact = (typeof CONSULT_EXPOSE)[number];
export type DobFormat = (typeof DOB_FORMATS)[number];

/** The campaign's consult_config (SPEC closed schema). `{}` disables verification. */
export interface ConsultConfig {
  factor?: ConsultFactor;
  max_attempts?: number;
  expose?: ExposableFact[];
  factor_opts?: { length?: number; dob_format?: DobFormat };
}

export interface DebtFacts {
  balance_cents: number;
  currency: string;
  creditor_name: string;
  account_last4?: string;
  /** The whole account number, when known: the account_last4 factor compares its trailing factor_opts.length digits. */
  account_number?: string;
  ssn_last4?: string;
  /** YYYY-MM-DD. */
  dob?: string;
  pin?: string;
  zip?: string;
  minimum_payment_cents?: number;
  /** YYYY-MM-DD. */
  due_date?: string;
  account_status?: string;
}

export interface ConversationContext {
  language: EngineLanguage;
  agent: {
    disclosure_text: string;
    policy: AgentPolicy;
    handoff_rules: HandoffRule[];
  };
  debt: DebtFacts;
  consult_config: ConsultConfig;
  consumer_name?: string;
  /** The hard ceiling of the AI part of the call (ai_max_call_seconds_effective). */
  max_call_seconds: number;
}

export type OfferKind = 'lump_sum' | 'installments' | 'payment';

/**
 * An offer the agent makes. `amount_cents` is what the consumer commits to in total: the lump
 * sum, the plan total (always the full balance) or the partial payment. A plan is `months`
 * installments: months − 1 of `installment_cents` and a last one of `final_installment_cents`
 * (the remainder cents go last, so it is never smaller than the others).
 */
export interface Offer {
  kind: OfferKind;
  amount_cents: number;
  months?: number;
  installment_cents?: number;
  final_installment_cents?: number;
  /** amount_cents as a percentage of the balance, two decimals. */
  pct_of_balance: number;
}

export type PaymentMethod = 'promise' | 'card_on_file';

export interface PromiseEvent {
  type: 'promise';
  kind: OfferKind;
  amount_cents: number;
  months?: number;
  installment_cents?: number;
  final_installment_cents?: number;
  /** YYYY-MM-DD when the consumer named one. */
  date?: string;
  /** card_on_file only when the policy takes payments and the consumer agreed to it. */
  method: PaymentMethod;
}

export const OUTCOMES = [
  'promise_to_pay',
  'handoff',
  'verification_failed',
  'refused_to_pay',
  'callback_requested',
  'wrong_party',
  'max_duration',
  'completed',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Why a conversation ended, finer than the outcome (several reasons share `completed`). */
export type EndReason =
  | 'promise'
  | 'handoff'
  | 'verification_failed'
  | 'unverifiable'
  | 'refused'
  | 'opt_out'
  | 'callback'
  | 'wrong_party'
  | 'ceiling'
  | 'wrap_up'
  | 'no_response'
  | 'handoff_declined'
  | 'disputed'
  | 'nothing_due'
  | 'identity_only'
  | 'offer_outside_policy'
  | 'invalid_context';

/** A handoff trigger, or `dispute`: a disputed debt is always offered to a person. */
export type HandoffSource = HandoffTrigger | 'dispute';

export interface HandoffRef {
  rule_id: string | null;
  trigger: HandoffSource;
  action: HandoffAction;
  severity: HandoffSeverity;
}

export type EngineEvent =
  | { type: 'disclosure_given' }
  | { type: 'identity_confirmed' }
  | { type: 'verification_attempt'; ok: boolean; attempt: number }
  | { type: 'verified' }
  | { type: 'verification_failed'; reason: 'max_attempts' | 'unverifiable' }
  | { type: 'mini_miranda_given' }
  | ({ type: 'offer' } & Offer)
  | { type: 'offer_declined'; reason: 'below_minimum' | 'too_many_months' }
  | PromiseEvent
  | ({ type: 'handoff_offered' } & HandoffRef)
  | ({ type: 'handoff_declined' } & HandoffRef)
  | ({ type: 'handoff' } & HandoffRef)
  | { type: 'refusal' }
  | { type: 'opt_out' }
  | { type: 'dispute' }
  | { type: 'reprompt'; count: number }
  | { type: 'guard_blocked'; source: 'policy' | 'fdcpa' | 'payments' | 'unverified' }
  | { type: 'wrap_up' }
  | { type: 'ceiling_reached' }
  | { type: 'end'; outcome: Outcome; reason: EndReason };

export interface Turn<S = unknown> {
  state: S;
  say: string[];
  events: EngineEvent[];
  outcome: Outcome | null;
}

export interface ConversationEngine<S = unknown> {
  start(context: ConversationContext): Turn<S>;
  respond(state: S, consumerUtterance: string, elapsedSeconds: number): Turn<S>;
}

/** The engine language from an agent's voice.language (BCP-47): its primary tag, `es` or else `en`. */
export function engineLanguage(bcp47: string | null | undefined): EngineLanguage {
  const primary = (bcp47 ?? '').trim().split(/[-_]/)[0]?.toLowerCase();
  return primary === 'es' ? 'es' : 'en';
}
