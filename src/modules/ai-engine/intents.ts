import {
  ASK_BALANCE,
  ASK_PURPOSE,
  CALLBACK,
  CURRENCY_WORDS,
  DECLINE_OFFER,
  DISPUTE,
  HUMAN_NOUNS,
  HUMAN_STANDALONE,
  HUMAN_VERBS,
  MONTH_UNITS,
  NO,
  OPT_OUT,
  PAY_VERBS,
  PER_MONTH,
  REFUSAL,
  REQUEST_NEGATIONS,
  SENTIMENT,
  SENTIMENT_NEGATIONS,
  WRONG_PARTY,
  YES,
} from './lexicon';
import { fold, hasAnyPhrase, indexOfPhrase, phrases, tokensOf } from './text';

/**
 * Utterance classification, English and Spanish at once. A reading is a set of signals, not one
 * intent: "yes, but I can only pay $50" is both a yes and an amount, and the engine decides which
 * signal wins in the phase it is in.
 */

export interface Amount {
  cents: number;
  /** Said as a monthly amount ("$50 a month"). */
  monthly: boolean;
}

export interface Reading {
  tokens: string[];
  yes: boolean;
  no: boolean;
  wrongParty: boolean;
  optOut: boolean;
  callback: boolean;
  dispute: boolean;
  refusal: boolean;
  declineOffer: boolean;
  askPurpose: boolean;
  askBalance: boolean;
  humanRequested: boolean;
  amounts: Amount[];
  months: number | null;
  /** An ISO date (YYYY-MM-DD) the consumer named. */
  date: string | null;
  sentiment: number;
}

const P = {
  yes: phrases(YES),
  no: phrases(NO),
  wrongParty: phrases(WRONG_PARTY),
  optOut: phrases(OPT_OUT),
  callback: phrases(CALLBACK),
  dispute: phrases(DISPUTE),
  refusal: phrases(REFUSAL),
  declineOffer: phrases(DECLINE_OFFER),
  askPurpose: phrases(ASK_PURPOSE),
  askBalance: phrases(ASK_BALANCE),
  humanVerbs: phrases(HUMAN_VERBS),
  humanNouns: phrases(HUMAN_NOUNS),
  humanStandalone: phrases(HUMAN_STANDALONE),
  requestNegations: phrases(REQUEST_NEGATIONS),
};

/** Anything above this is not a believable amount (and stays a safe integer in every product). */
const MAX_AMOUNT_CENTS = 1_000_000_000_00;
const NEGATION_WINDOW = 3;
const NOUN_WINDOW = 3;

const NUMBER = String.raw`(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?`;
const alternation = (list: readonly string[]) => list.map((w) => w.replace(/ /g, '\\s+')).join('|');
const DOLLAR_RE = new RegExp(String.raw`\$\s?${NUMBER}`, 'g');
const CURRENCY_RE = new RegExp(String.raw`(?<![\w.,])${NUMBER}\s*(?:${alternation(CURRENCY_WORDS)})\b`, 'g');
const PAY_RE = new RegExp(
  String.raw`\b(?:${alternation(PAY_VERBS)})\s+(?:you\s+|le\s+|les\s+)?${NUMBER}\b(?!\s*(?:${alternation(MONTH_UNITS)}|%|percent|por\s*ciento)\b)(?!\s*\$)`,
  'g',
);
const PER_MONTH_RE = new RegExp(String.raw`^\s*(?:${alternation(CURRENCY_WORDS)})?\s*(?:${alternation(PER_MONTH)})\b`);
const NUMBER_WORDS: Readonly<Record<string, number>> = {
  two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  dos: 2, tres: 3, cuatro: 4, cinco: 5, seis: 6, siete: 7, ocho: 8, nueve: 9, diez: 10, once: 11, doce: 12,
};
const MONTHS_RE = new RegExp(
  String.raw`(?<![\w.,$])(\d{1,3}|${Object.keys(NUMBER_WORDS).join('|')})\s+(?:monthly\s+)?(?:${alternation(MONTH_UNITS)})\b`,
);
const ISO_DATE_RE = /\b(\d{4})-(\d{2})-(\d{2})\b/;

function centsOf(whole: string, fraction: string | undefined): number | null {
  const dollars = Number(whole.replace(/,/g, ''));
  const cents = fraction === undefined ? 0 : Number(fraction.padEnd(2, '0'));
  const total = dollars * 100 + cents;
  return Number.isSafeInteger(total) && total > 0 && total <= MAX_AMOUNT_CENTS ? total : null;
}

/** Money the consumer names: "$50", "50 dollars", "pay 50", each marked monthly when said per month. */
export function amountsOf(text: string): Amount[] {
  const folded = fold(text);
  const found = new Map<number, Amount>();
  for (const re of [DOLLAR_RE, CURRENCY_RE, PAY_RE]) {
    for (const m of folded.matchAll(re)) {
      const cents = centsOf(m[1]!, m[2]);
      const start = m.index + m[0].search(/\d/);
      if (cents === null || found.has(start)) continue;
      found.set(start, { cents, monthly: PER_MONTH_RE.test(folded.slice(m.index + m[0].length)) });
    }
  }
  return [...found.entries()].sort((a, b) => a[0] - b[0]).map(([, amount]) => amount);
}

export function monthsOf(text: string): number | null {
  const m = MONTHS_RE.exec(fold(text));
  if (!m) return null;
  const n = NUMBER_WORDS[m[1]!] ?? Number(m[1]);
  return Number.isSafeInteger(n) ? n : null;
}

export function dateOf(text: string): string | null {
  const m = ISO_DATE_RE.exec(text);
  if (!m) return null;
  const month = Number(m[2]);
  const day = Number(m[3]);
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 ? m[0] : null;
}

/** Lexicon sentiment: the sum of word scores, a score flipped by a negation up to two words before. */
export function sentimentOf(tokens: readonly string[]): number {
  let score = 0;
  tokens.forEach((token, i) => {
    const value = SENTIMENT[token];
    if (value === undefined) return;
    const negated = tokens.slice(Math.max(0, i - 2), i).some((t) => SENTIMENT_NEGATIONS.has(t));
    score += negated ? -value : value;
  });
  return score;
}

function negatedAt(tokens: readonly string[], at: number): boolean {
  const before = tokens.slice(Math.max(0, at - NEGATION_WINDOW), at);
  return P.requestNegations.some((n) => indexOfPhrase(before, n) >= 0);
}

/** "speak to a person", "hablar con un agente", a bare "operator": not when negated just before. */
export function requestsHuman(tokens: readonly string[]): boolean {
  for (const verb of P.humanVerbs) {
    for (let at = indexOfPhrase(tokens, verb); at >= 0; at = indexOfPhrase(tokens, verb, at + 1)) {
      if (negatedAt(tokens, at)) continue;
      const after = tokens.slice(at + verb.length, at + verb.length + NOUN_WINDOW + 1);
      if (P.humanNouns.some((noun) => indexOfPhrase(after, noun) >= 0)) return true;
    }
  }
  return P.humanStandalone.some((phrase) => {
    const at = indexOfPhrase(tokens, phrase);
    return at >= 0 && !negatedAt(tokens, at);
  });
}

export function readUtterance(text: string): Reading {
  const tokens = tokensOf(text);
  const has = (list: string[][]) => hasAnyPhrase(tokens, list);
  return {
    tokens,
    yes: has(P.yes),
    no: has(P.no),
    wrongParty: has(P.wrongParty),
    optOut: has(P.optOut),
    callback: has(P.callback),
    dispute: has(P.dispute),
    refusal: has(P.refusal),
    declineOffer: has(P.declineOffer),
    askPurpose: has(P.askPurpose),
    askBalance: has(P.askBalance),
    humanRequested: requestsHuman(tokens),
    amounts: amountsOf(text),
    months: monthsOf(text),
    date: dateOf(text),
    sentiment: sentimentOf(tokens),
  };
}
