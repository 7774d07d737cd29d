import { pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { authMetrics } from './auth-metrics';

const pbkdf2Async = promisify(pbkdf2);
const KEY_LENGTH = 64;
const SALT_BYTES = 16;
const MAX_ITERATIONS = 10_000_000;

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 128;

/** Policy check shared by user creation, reset confirm and password change (12..128 characters). */
export function passwordPolicyError(password: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    return `password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`;
  }
  return null;
}

/** PBKDF2-SHA512; the iteration count travels with the hash so it can be raised later. */
export async function hashPassword(password: string, iterations: number): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  authMetrics.hashed('hash');
  const key = await pbkdf2Async(password, salt, iterations, KEY_LENGTH, 'sha512');
  return `pbkdf2_sha512$${iterations}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, iterText, saltB64, keyB64] = stored.split('$');
  if (scheme !== 'pbkdf2_sha512' || !iterText || !saltB64 || !keyB64) return false;
  const iterations = Number(iterText);
  const expected = Buffer.from(keyB64, 'base64');
  // A malformed or tampered hash is a failed verification, never an exception or a CPU sink.
  if (!Number.isSafeInteger(iterations) || iterations < 1 || iterations > MAX_ITERATIONS || expected.length === 0) return false;
  authMetrics.hashed('verify');
  const key = await pbkdf2Async(password, Buffer.from(saltB64, 'base64'), iterations, expected.length, 'sha512');
  return timingSafeEqual(key, expected);
}

/**
 * A hash of a random password at the configured cost, verified against when the email is unknown
 * so that unknown email, wrong password and disabled user take the same time.
 */
export function createDecoyHash(iterations: number): Promise<string> {
  return hashPassword(randomBytes(24).toString('base64'), iterations);
}
