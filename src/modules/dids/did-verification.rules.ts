import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * Proof of control of a customer DID (issue 17): the platform texts a short code to the number and
 * the tenant confirms it. Pure apart from the randomness of a new code and salt.
 */

export const VERIFICATION_CODE_DIGITS = 6;
/** A code lives 10 minutes: long enough to read a text, short enough to make guessing pointless. */
export const VERIFICATION_TTL_MS = 10 * 60_000;
/** Wrong codes allowed per code; the last one burns it (status failed). */
export const VERIFICATION_MAX_ATTEMPTS = 5;
/** Codes to one number are spaced: a new code at most every 60 s ... */
export const VERIFICATION_RESEND_COOLDOWN_MS = 60_000;
/** ... and at most 5 per DID in a 24 h window, so the platform never becomes a way to flood a number. */
export const VERIFICATION_SENDS_PER_WINDOW = 5;
export const VERIFICATION_SEND_WINDOW_MS = 24 * 3600_000;
/** Numbers of one tenant sent a code within the last hour, at most. */
export const VERIFICATION_DIDS_PER_TENANT_HOUR = 20;

export const VERIFICATION_STATUSES = ['pending', 'verified', 'failed', 'expired', 'undelivered'] as const;
export const VERIFICATION_METHODS = ['sms', 'legacy'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];
export type VerificationMethod = (typeof VERIFICATION_METHODS)[number];

const CODE_RE = new RegExp(`^\\d{${VERIFICATION_CODE_DIGITS}}$`);

export function newVerificationCode(): string {
  return String(randomInt(0, 10 ** VERIFICATION_CODE_DIGITS)).padStart(VERIFICATION_CODE_DIGITS, '0');
}

const macOf = (salt: Buffer, didId: string, code: string): Buffer => createHmac('sha256', salt).update(`${didId}:${code}`, 'utf8').digest();

/**
 * What is stored of a code: `<salt>.<HMAC-SHA256(salt, did id:code)>`, never the code. Bound to the
 * DID, so a hash copied onto another row proves nothing there.
 */
export function hashVerificationCode(didId: string, code: string, salt: Buffer = randomBytes(16)): string {
  return `${salt.toString('base64url')}.${macOf(salt, didId, code).toString('base64url')}`;
}

/** Constant-time: the MACs are compared, whatever the shape of the code offered. */
export function verificationCodeMatches(stored: string, didId: string, code: string): boolean {
  const [saltText, macText] = stored.split('.');
  if (!saltText || !macText) return false;
  const expected = Buffer.from(macText, 'base64url');
  const offered = macOf(Buffer.from(saltText, 'base64url'), didId, code);
  return offered.length === expected.length && timingSafeEqual(offered, expected) && CODE_RE.test(code);
}

/** The text sent to the number. It names no tenant: whoever holds the number learns nothing of who asked. */
export function verificationText(code: string): string {
  return `Your number verification code is ${code}. It expires in ${VERIFICATION_TTL_MS / 60_000} minutes. If you did not ask to register this number, ignore this message.`;
}

export interface VerificationState {
  status: string | null;
  method: string | null;
  expiresAt: Date | null;
  attempts: number;
}

export interface VerificationView {
  status: VerificationStatus;
  method: VerificationMethod;
  expires_at: string | null;
  attempts_left: number | null;
}

/** The verification as the API shows it; a pending code past its expiry reads as expired. */
export function verificationViewOf(s: VerificationState, now: Date): VerificationView | null {
  if (s.status === null || s.method === null) return null;
  const pending = s.status === 'pending';
  const status = pending && s.expiresAt !== null && s.expiresAt.getTime() <= now.getTime() ? 'expired' : (s.status as VerificationStatus);
  return {
    status,
    method: s.method as VerificationMethod,
    expires_at: pending && s.expiresAt ? s.expiresAt.toISOString() : null,
    attempts_left: status === 'pending' ? Math.max(0, VERIFICATION_MAX_ATTEMPTS - s.attempts) : null,
  };
}

/** A house DID is vouched for by the operator; a customer DID must have proven control. */
export function mayBeActive(origin: string, verificationStatus: string | null): boolean {
  return origin === 'house' || verificationStatus === 'verified';
}
