/**
 * The retry ladder of outbound webhook deliveries and the reading of a receiver's answer. Pure.
 *
 * A delivery is tried at once, then again after each failed attempt n (1-based) after
 * RETRY_DELAYS[n - 1]: 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h, 12 h, 24 h, 24 h. That is
 * 11 attempts over about 2 days 23 hours (70.7 h nominal): a receiver down for a weekend still
 * gets everything, and a receiver that is merely slow to deploy a fix is retried often early on.
 * The steps grow roughly geometrically and stop at a 24 h cap. Each delay carries ±20 % uniform
 * jitter so receivers recovering from an outage are not hit by every tenant's backlog in the same
 * second; the cap bounds the jittered value too (no gap exceeds 24 h). When attempt 11 fails the
 * delivery is dead (a dead letter, kept, redeliverable by the API).
 *
 * WEBHOOK_RETRY_SCALE multiplies every delay (tests run the whole ladder in about two seconds with
 * 0.00001); it changes nothing else.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Delay before attempt n + 1 after attempt n failed, index n - 1. */
export const RETRY_DELAYS_MS: readonly number[] = [30 * SECOND, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR, 24 * HOUR];
export const RETRY_CAP_MS = 24 * HOUR;
export const RETRY_JITTER = 0.2;
/** The first try plus one per ladder step. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** Human-readable ladder for documentation (OpenAPI, docs/webhooks.md). */
export function describeLadder(): string {
  const label = (ms: number) => (ms >= HOUR ? `${ms / HOUR} h` : ms >= MINUTE ? `${ms / MINUTE} min` : `${ms / SECOND} s`);
  const nominalHours = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) / HOUR;
  return (
    `${MAX_ATTEMPTS} attempts: the first at once, then after ${RETRY_DELAYS_MS.map(label).join(', ')} ` +
    `(each ±${RETRY_JITTER * 100} % random jitter, never more than ${label(RETRY_CAP_MS)}; about ${nominalHours.toFixed(1)} h in all), then dead`
  );
}

export interface LadderOptions {
  /** WEBHOOK_RETRY_SCALE. */
  scale?: number;
  /** Uniform in [0, 1); injected by tests. */
  random?: () => number;
}

/**
 * How long to wait after failed attempt `attempt` (1-based) before the next one; null when it was
 * the last attempt the ladder allows (the delivery is dead).
 */
export function retryDelayMs(attempt: number, options: LadderOptions = {}): number | null {
  if (!Number.isInteger(attempt) || attempt < 1) throw new Error(`retryDelayMs: attempt must be a positive integer, got ${attempt}`);
  const nominal = RETRY_DELAYS_MS[attempt - 1];
  if (nominal === undefined) return null;
  const random = options.random ?? Math.random;
  const jittered = nominal * (1 + RETRY_JITTER * (2 * random() - 1));
  return Math.max(0, Math.round(Math.min(RETRY_CAP_MS, jittered) * (options.scale ?? 1)));
}

/** What a finished attempt means for the delivery. */
export type AttemptVerdict = 'delivered' | 'gone' | 'retry';

/**
 * Any 2xx is delivered. 410 Gone is the receiver saying the endpoint no longer exists: it is
 * disabled and nothing more is sent. Anything else (another status, a 3xx that is not followed, a
 * timeout, a refused connection, an egress refusal) is retried: a receiver may be mid-deploy, and
 * an address that fails the egress check may be fixed by its owner's DNS.
 */
export function verdictOf(statusCode: number | null): AttemptVerdict {
  if (statusCode !== null && statusCode >= 200 && statusCode <= 299) return 'delivered';
  if (statusCode === 410) return 'gone';
  return 'retry';
}

export type DeliveryStatus = 'pending' | 'delivered' | 'dead' | 'cancelled';

export interface AttemptOutcome {
  status: DeliveryStatus;
  /** For a delivery still pending: when it is due again. */
  nextAttemptAt: Date | null;
}

/** The delivery's state after attempt `attempt` ended with `statusCode` at `now`. */
export function outcomeOf(attempt: number, statusCode: number | null, now: Date, options: LadderOptions = {}): AttemptOutcome {
  switch (verdictOf(statusCode)) {
    case 'delivered':
      return { status: 'delivered', nextAttemptAt: null };
    case 'gone':
      return { status: 'cancelled', nextAttemptAt: null };
    case 'retry': {
      const delay = retryDelayMs(attempt, options);
      return delay === null ? { status: 'dead', nextAttemptAt: null } : { status: 'pending', nextAttemptAt: new Date(now.getTime() + delay) };
    }
  }
}

/** Only a dead letter or a cancelled delivery is sent again on request (never twice at once). */
export function canRedeliver(status: DeliveryStatus, endpointEnabled: boolean): { ok: true } | { ok: false; reason: string } {
  if (!endpointEnabled) return { ok: false, reason: 'the endpoint is disabled: re-enable it (PATCH enabled true) before redelivering' };
  if (status !== 'dead' && status !== 'cancelled') return { ok: false, reason: `only a dead or cancelled delivery can be redelivered; this one is ${status}` };
  return { ok: true };
}

export const DISABLED_GONE = 'gone_410';
