import type { DebtFacts } from '../ai-engine/engine.types';

/**
 * A run of 7 or more digits in consumer words (a phone, card or account number), consecutive
 * digits at most two separators apart (space, dash, dot, parenthesis): "(555) 123-4567" is one run.
 */
const DIGIT_RUN = /\d(?:[ .()-]{0,2}\d){6,}/g;

/**
 * Consumer words are stored masked, for sandbox and live transcripts alike: every digit of a run
 * of 7 or more keeps only the run's last four, separators stay ("***-***-4567"). Applied when the
 * row is written (never on read), so an unmasked number is never at rest in a transcript. The
 * engine itself reads the words unmasked: verification answers are four digits or a date.
 */
export function maskConsumerText(text: string): string {
  return text.replace(DIGIT_RUN, (run) => {
    let keep = run.replace(/\D/g, '').length - 4;
    return run.replace(/\d/g, (d) => (keep-- > 0 ? '*' : d));
  });
}

/** The synthetic debt a sandbox run talks about when the request sends none (or only some facts). */
export const SANDBOX_DEFAULT_DEBT = {
  balance_cents: 100000,
  currency: 'USD',
  creditor_name: 'Sample Creditor',
  account_last4: '6789',
  ssn_last4: '1234',
  dob: '1980-01-31',
  pin: '2468',
  zip: '10001',
  minimum_payment_cents: 5000,
  due_date: '2030-01-31',
  account_status: 'past due',
} satisfies Required<Omit<DebtFacts, 'account_number'>>;

export const SANDBOX_DEFAULT_SECONDS_PER_TURN = 10;
export const SANDBOX_MAX_TURNS = 50;
export const SANDBOX_MAX_TURN_CHARS = 1000;
export const SANDBOX_MAX_SECONDS_PER_TURN = 3600;

const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;

function isCalendarDay(value: string): boolean {
  if (!ISO_DAY.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}

/** Why synthetic debt facts cannot be talked about, or null. Types are checked by the schema. */
export function sandboxDebtProblem(debt: Partial<DebtFacts>): string | null {
  if (debt.currency !== undefined && !/^[A-Z]{3}$/.test(debt.currency)) return 'debt.currency must be an ISO 4217 code (three capital letters)';
  if (debt.creditor_name !== undefined && debt.creditor_name.trim() === '') return 'debt.creditor_name must not be blank';
  for (const key of ['account_last4', 'ssn_last4'] as const) {
    const v = debt[key];
    if (v !== undefined && !/^\d{4}$/.test(v)) return `debt.${key} must be four digits`;
  }
  if (debt.pin !== undefined && !/^\d{4,8}$/.test(debt.pin)) return 'debt.pin must be 4 to 8 digits';
  if (debt.zip !== undefined && !/^\d{5}$/.test(debt.zip)) return 'debt.zip must be five digits';
  for (const key of ['dob', 'due_date'] as const) {
    const v = debt[key];
    if (v !== undefined && !isCalendarDay(v)) return `debt.${key} must be a calendar date YYYY-MM-DD`;
  }
  return null;
}

export const ELIGIBILITY_REASONS = [
  'voice_ai_disabled',
  'tier_not_eligible',
  'ai_paused',
  'budget_exhausted',
  'no_ai_agent',
  'ai_agent_not_live',
  'disclosure_invalid',
  'no_prior_express_consent_path',
] as const;
export type EligibilityReason = (typeof ELIGIBILITY_REASONS)[number];

export interface EligibilityFacts {
  voiceAiEnabled: boolean;
  tierAllowsAi: boolean;
  paused: boolean;
  budgetExhausted: boolean;
  /** Null when the campaign names no AI agent. */
  agentStatus: string | null;
  /** The tenant's ArtificialVoiceDisclosure passes the content check (false when none is stored). */
  tenantDisclosureValid: boolean;
  /** The agent's disclosure passes the engine's context check; null without an agent. */
  agentDisclosureValid: boolean | null;
  /** Whether the campaign's calls are artificial-voice calls at all (compliance attemptProfile). */
  artificialVoice: boolean;
  consentedLeads: number;
}

/** Every reason a campaign cannot place AI calls now, in a fixed order; empty = eligible. */
export function eligibilityReasons(f: EligibilityFacts): EligibilityReason[] {
  const reasons: EligibilityReason[] = [];
  if (!f.voiceAiEnabled) reasons.push('voice_ai_disabled');
  if (!f.tierAllowsAi) reasons.push('tier_not_eligible');
  if (f.paused) reasons.push('ai_paused');
  if (f.budgetExhausted) reasons.push('budget_exhausted');
  if (f.agentStatus === null) reasons.push('no_ai_agent');
  else if (f.agentStatus !== 'live') reasons.push('ai_agent_not_live');
  if (f.artificialVoice && (!f.tenantDisclosureValid || f.agentDisclosureValid === false)) reasons.push('disclosure_invalid');
  if (f.artificialVoice && f.consentedLeads === 0) reasons.push('no_prior_express_consent_path');
  return reasons;
}

/** n / d as a decimal string with 4 places (half up), null when d is 0: rates are never JS floats. */
export function ratio(n: number, d: number): string | null {
  if (d === 0) return null;
  const scaled = (BigInt(n) * 100000n) / BigInt(d);
  const rounded = (scaled + 5n) / 10n;
  return `${rounded / 10000n}.${(rounded % 10000n).toString().padStart(4, '0')}`;
}
