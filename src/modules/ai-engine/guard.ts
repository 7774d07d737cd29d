import type { EngineEvent, EngineLanguage, TakePayments } from './engine.types';
import { CARD_DETAILS, CARD_MENTION, FDCPA_PROHIBITED } from './lexicon';
import { fold, spaced, tokensOf } from './text';

/**
 * The final output guard. Every sentence the engine would speak passes here LAST, after all
 * templating, so no prohibited phrase is ever spoken whatever a template, a tenant-supplied name
 * or a future model produces. A sentence that would violate is replaced by a safe fallback (or
 * dropped, when the fallback itself would violate) and a guard_blocked event is emitted; the
 * event names the list that blocked it, never the text.
 *
 * Checked, in order:
 * 1. policy.prohibited: case- and accent-insensitive substring, on the raw folded text and on the
 *    words with punctuation collapsed ("legal-action" matches "legal action").
 * 2. Built-in FDCPA content: threats of arrest or jail, suing, garnishment, criminal framing,
 *    profanity, and card-detail requests.
 * 3. take_payments none: any mention of a card.
 * 4. Sentences queued before verification succeeded (`withhold`; never the disclosure, which
 *    names the caller): the debt details not yet disclosable (creditor name, amounts as spoken,
 *    account last four). Defense in depth: no template says them before verification anyway.
 */

export type GuardSource = 'policy' | 'fdcpa' | 'payments' | 'unverified';

export interface GuardOptions {
  language: EngineLanguage;
  prohibited: readonly string[];
  takePayments: TakePayments;
  /** Debt details that sentences marked `withhold` may not contain. */
  withheld: readonly string[];
}

export interface GuardItem {
  text: string;
  /** Queued before verification succeeded: checked against `withheld`. */
  withhold: boolean;
}

export const GUARD_FALLBACK: Readonly<Record<EngineLanguage, string>> = {
  en: "I'm sorry, I can't discuss that.",
  es: 'Lo siento, no puedo hablar de eso.',
};

/** Case-, accent- and punctuation-insensitive substring. An empty phrase never matches. */
export function containsPhrase(text: string, phrase: string): boolean {
  const raw = fold(phrase).trim();
  if (raw === '') return false;
  if (fold(text).includes(raw)) return true;
  const words = tokensOf(phrase).join(' ');
  return words !== '' && tokensOf(text).join(' ').includes(words);
}

export function violation(text: string, options: GuardOptions, withhold = false): GuardSource | null {
  if (options.prohibited.some((p) => typeof p === 'string' && containsPhrase(text, p))) return 'policy';
  const words = spaced(text);
  if (FDCPA_PROHIBITED.some((re) => re.test(words)) || CARD_DETAILS.some((re) => re.test(words))) return 'fdcpa';
  if (options.takePayments !== 'card_on_file' && CARD_MENTION.some((re) => re.test(words))) return 'payments';
  if (withhold && options.withheld.some((w) => containsPhrase(text, w))) return 'unverified';
  return null;
}

export function guardSay(items: readonly GuardItem[], options: GuardOptions): { say: string[]; events: EngineEvent[] } {
  const say: string[] = [];
  const events: EngineEvent[] = [];
  const fallback = GUARD_FALLBACK[options.language];
  const fallbackSafe = violation(fallback, options) === null;
  for (const item of items) {
    const source = violation(item.text, options, item.withhold);
    if (source === null) {
      say.push(item.text);
      continue;
    }
    events.push({ type: 'guard_blocked', source });
    if (fallbackSafe && say[say.length - 1] !== fallback) say.push(fallback);
  }
  return { say, events };
}
