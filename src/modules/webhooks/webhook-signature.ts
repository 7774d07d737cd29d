import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The v1 signature of outbound webhooks (SPEC "Events", CONTRACT section 3):
 * `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the endpoint
 * secret exactly as it was shown (the whole `whsec_…` string, as UTF-8). This is the construction
 * Stripe-compatible verifiers accept, so receivers can use a maintained library instead of ours.
 */

export const SIGNATURE_SCHEME = 'v1';
/** The reference verifier's replay window, either way of the receiver's clock. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type VerifyOutcome = 'ok' | 'malformed' | 'stale' | 'mismatch';

function v1Of(secret: string, body: string | Buffer, unixSeconds: number): string {
  return createHmac('sha256', secret).update(`${unixSeconds}.`, 'utf8').update(body).digest('hex');
}

/** The X-DD-Signature (or X-DD-Signature-Previous) value for a body sent at unixSeconds. */
export function signatureHeader(secret: string, body: string | Buffer, unixSeconds: number): string {
  if (!Number.isSafeInteger(unixSeconds) || unixSeconds < 0) throw new Error('signatureHeader: t must be a non-negative integer of seconds');
  return `t=${unixSeconds},${SIGNATURE_SCHEME}=${v1Of(secret, body, unixSeconds)}`;
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/** t and every v1 of a header; null when it does not parse (one t, at least one v1, nothing else odd). */
function parseHeader(header: string): { t: number; v1: string[] } | null {
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== null || !/^\d{1,12}$/.test(value)) return null;
      t = Number(value);
    } else if (key === SIGNATURE_SCHEME) {
      // A later scheme may add signatures under other keys; an unparseable v1 is still malformed.
      if (!HEX_SHA256.test(value)) return null;
      v1.push(value);
    }
  }
  return t === null || v1.length === 0 ? null : { t, v1 };
}

/**
 * The reference receiver check, in the order SPEC "Events" gives: parse (malformed), the clock
 * (stale, `toleranceSec` either way), recompute over the raw bytes with each accepted secret, and
 * compare in constant time (mismatch). `secrets` lets a receiver accept its old and new secret
 * while it rolls a rotation out. The body must be the bytes received, before any JSON parsing.
 */
export function verifySignature(
  header: string | null | undefined,
  body: string | Buffer,
  secrets: readonly string[],
  now: Date = new Date(),
  toleranceSec: number = DEFAULT_TOLERANCE_SECONDS,
): VerifyOutcome {
  if (typeof header !== 'string' || header.length > 4096) return 'malformed';
  const parsed = parseHeader(header);
  if (!parsed) return 'malformed';
  if (Math.abs(Math.floor(now.getTime() / 1000) - parsed.t) > toleranceSec) return 'stale';
  let matched = false;
  for (const secret of secrets) {
    const expected = Buffer.from(v1Of(secret, body, parsed.t), 'utf8');
    for (const candidate of parsed.v1) {
      // Both are 64 hex characters (checked at parse), so the lengths always agree; every
      // pair is compared, found or not, so timing says nothing about which one matched.
      if (timingSafeEqual(expected, Buffer.from(candidate, 'utf8'))) matched = true;
    }
  }
  return matched ? 'ok' : 'mismatch';
}
