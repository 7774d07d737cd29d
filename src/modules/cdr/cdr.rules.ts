/** Disposition rules (SPEC "Call attempts (CDR)"). Pure. */
import { promisedDateError } from '../promises/promise.rules';

/** The typed outcome that records a promise to pay. */
export const PROMISE_TO_PAY = 'promise_to_pay';

/**
 * Dispositions that say the agent talked with the consumer (CONTRACT section 9): on an answered
 * attempt each is a telephone conversation for Regulation F's 7-day hiatus (12 CFR 1006.14(b)(2)(i)(B)).
 */
export const RIGHT_PARTY_CONTACT: ReadonlySet<string> = new Set([
  'promise_to_pay',
  'refused_to_pay',
  'dispute',
  'callback_requested',
  'payment',
  'conversation',
]);

/** The number reached someone who is not the consumer: it goes on the do-not-call list, its consents for the debt revoked. */
export const WRONG_NUMBER = 'wrong_number';

/**
 * The consumer told the agent to stop calling (a revocation by any reasonable means, 47 CFR
 * 64.1200(a)(10)): the number is listed and its voice consents revoked, as the opt-out digit does.
 */
export const VERBAL_REVOCATIONS: ReadonlySet<string> = new Set(['revoked_consent', 'do_not_call']);

/** Longest disposition code and agent note, in characters. */
export const MAX_DISPOSITION_LENGTH = 64;
export const MAX_NOTE_LENGTH = 2000;

/**
 * Why a disposition is semantically refused (422), or null: promise_to_pay needs a promise, any
 * other disposition must not carry one, and the promised date must be in the future and at most
 * 90 days out.
 */
export function dispositionRuleError(
  disposition: string,
  promise: { promised_date: string } | null | undefined,
  now: Date,
): string | null {
  const hasPromise = promise !== null && promise !== undefined;
  if (disposition === PROMISE_TO_PAY) {
    if (!hasPromise) return 'disposition promise_to_pay requires a promise';
    return promisedDateError(promise.promised_date, now);
  }
  if (hasPromise) return `a promise is accepted only with disposition ${PROMISE_TO_PAY}`;
  return null;
}

/** Rejects the bracket array form of query parameters (`disposition[]=a`, `disposition[0]=a`). */
export function bracketQueryKey(keys: Iterable<string>): string | null {
  for (const key of keys) if (key.includes('[') || key.includes(']')) return key;
  return null;
}

/** Two agent uuids name the same agent (a query may spell a uuid in upper case). */
export function sameAgent(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
