import type { ConsultConfig, ConsultFactor, DebtFacts, DobFormat } from './engine.types';
import { DIGIT_WORDS, MONTH_NAMES } from './lexicon';
import { fold, tokensOf } from './text';

/**
 * Identity verification with the campaign's consult_config. Answers are normalized before they
 * are compared: digits only for account_last4, ssn_last4, pin and zip (spoken digit words count:
 * "one two three four"), and a date of birth to MMDD or MMDDYYYY per factor_opts.dob_format.
 * The comparison is exact on the normalized form.
 */

export const DEFAULT_MAX_ATTEMPTS = 3;
/** The stronger form by default: month, day and year. */
export const DEFAULT_DOB_FORMAT: DobFormat = 'mmddyyyy';
const DEFAULT_LENGTH: Readonly<Record<Exclude<ConsultFactor, 'dob'>, number | null>> = {
  account_last4: 4,
  ssn_last4: 4,
  pin: null,
  zip: 5,
};

export interface VerificationPlan {
  factor: ConsultFactor;
  /** Digits asked for (null: the whole PIN); not used for dob. */
  length: number | null;
  dob_format: DobFormat;
  max_attempts: number;
  /** The normalized answer, or null when the debt lacks the fact: nobody can be verified. */
  expected: string | null;
}

export function verificationEnabled(config: ConsultConfig): boolean {
  return typeof config.factor === 'string';
}

const digitsOf = (value: string): string => value.replace(/\D/g, '');
const pad2 = (n: number): string => String(n).padStart(2, '0');

function storedFact(factor: ConsultFactor, debt: DebtFacts): string | undefined {
  switch (factor) {
    case 'account_last4':
      return debt.account_number ?? debt.account_last4;
    case 'ssn_last4':
      return debt.ssn_last4;
    case 'dob':
      return debt.dob;
    case 'pin':
      return debt.pin;
    case 'zip':
      return debt.zip;
  }
}

function storedDob(dob: string, format: DobFormat): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(dob.trim());
  if (!m) return null;
  return format === 'mmdd' ? `${m[2]}${m[3]}` : `${m[2]}${m[3]}${m[1]}`;
}

/** The digits a factor expects: the trailing ones of a last-4 or PIN, the leading ones of a ZIP. */
function storedDigits(factor: Exclude<ConsultFactor, 'dob'>, value: string, length: number | null): string | null {
  const digits = digitsOf(value);
  if (digits === '') return null;
  if (length === null) return digits;
  if (digits.length < length) return null;
  return factor === 'zip' ? digits.slice(0, length) : digits.slice(-length);
}

/** Null when verification is disabled. */
export function verificationPlan(config: ConsultConfig, debt: DebtFacts): VerificationPlan | null {
  if (!verificationEnabled(config)) return null;
  const factor = config.factor!;
  const attempts = config.max_attempts;
  const max_attempts = Number.isInteger(attempts) && attempts! >= 1 ? attempts! : DEFAULT_MAX_ATTEMPTS;
  const dob_format = config.factor_opts?.dob_format === 'mmdd' ? 'mmdd' : DEFAULT_DOB_FORMAT;
  const optLength = config.factor_opts?.length;
  const length = factor === 'dob' ? null : Number.isSafeInteger(optLength) && optLength! >= 1 ? optLength! : DEFAULT_LENGTH[factor];
  const stored = storedFact(factor, debt);
  let expected: string | null = null;
  if (typeof stored === 'string') {
    expected = factor === 'dob' ? storedDob(stored, dob_format) : storedDigits(factor, stored, length);
  }
  return { factor, length, dob_format, max_attempts, expected };
}

/** Digits in an answer, spoken digit words included. */
export function answerDigits(text: string): string {
  return tokensOf(text)
    .map((t) => DIGIT_WORDS[t] ?? digitsOf(t))
    .join('');
}

/**
 * A spoken date of birth as MMDD or MMDDYYYY. Numbers are read month first, then day, then year,
 * in both languages: that is the order the agent asks for ("month, day and year"; "mes, día y
 * año"). A month name ("March 15 1980", "15 de marzo de 1980") fixes the month wherever it is.
 */
export function normalizeDob(text: string, format: DobFormat): string | null {
  const folded = fold(text).replace(/(\d)(st|nd|rd|th)\b/g, '$1');
  const tokens = tokensOf(folded);
  const named = tokens.map((t) => MONTH_NAMES[t]).find((m) => m !== undefined);
  const groups = folded.match(/\d+/g) ?? [];
  let month: number | undefined;
  let day: number | undefined;
  let year: number | undefined;
  if (named !== undefined) {
    month = named;
    const d = groups.find((g) => g.length <= 2);
    day = d === undefined ? undefined : Number(d);
    const y = groups.find((g) => g.length === 4);
    year = y === undefined ? undefined : Number(y);
  } else if (groups.length === 1 && (groups.join('').length === 4 || groups.join('').length === 8)) {
    const g = groups.join('');
    month = Number(g.slice(0, 2));
    day = Number(g.slice(2, 4));
    year = g.length === 8 ? Number(g.slice(4)) : undefined;
  } else if (groups.length >= 2) {
    month = Number(groups[0]);
    day = Number(groups[1]);
    year = groups[2]?.length === 4 ? Number(groups[2]) : undefined;
  }
  if (month === undefined || day === undefined || month < 1 || month > 12 || day < 1 || day > 31) return null;
  if (format === 'mmdd') return `${pad2(month)}${pad2(day)}`;
  return year === undefined ? null : `${pad2(month)}${pad2(day)}${year}`;
}

/** Whether an utterance holds an answer at all (digits, digit words or a month name). */
export function hasAnswer(plan: VerificationPlan, text: string): boolean {
  if (answerDigits(text) !== '') return true;
  return plan.factor === 'dob' && tokensOf(text).some((t) => MONTH_NAMES[t] !== undefined);
}

export function answerMatches(plan: VerificationPlan, text: string): boolean {
  if (plan.expected === null) return false;
  const given = plan.factor === 'dob' ? normalizeDob(text, plan.dob_format) : answerDigits(text);
  return given === plan.expected;
}
