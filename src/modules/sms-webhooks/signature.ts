import { createHmac, createPublicKey, timingSafeEqual, verify, type KeyObject } from 'node:crypto';

/** Header names per scheme (CONTRACT section 4, SPEC "Provider webhooks"). */
export const HMAC_HEADER = 'x-dd-signature';
export const ED25519_SIGNATURE_HEADER = 'telnyx-signature-ed25519';
export const ED25519_TIMESTAMP_HEADER = 'telnyx-timestamp';
/** carrier_a replay window, either way. */
export const ED25519_TOLERANCE_SECONDS = 5 * 60;

export type VerifyOutcome = 'ok' | 'malformed' | 'stale' | 'mismatch';

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/** Lowercase hex HMAC-SHA256 of the raw body keyed with the provider's secret. */
export function hmacSignature(rawBody: Uint8Array, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('hex');
}

/** http and mock adapters. The header is compared as bytes in constant time after a shape check that leaks nothing secret. */
export function verifyHmac(rawBody: Uint8Array, secret: string, header: string | undefined): VerifyOutcome {
  if (header === undefined || !HEX_SHA256.test(header)) return 'malformed';
  const expected = Buffer.from(hmacSignature(rawBody, secret), 'utf8');
  return timingSafeEqual(expected, Buffer.from(header, 'utf8')) ? 'ok' : 'mismatch';
}

// DER prefix of an Ed25519 SubjectPublicKeyInfo: a raw 32-byte key becomes SPKI by prepending it.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The stored carrier_a secret is a base64 Ed25519 public key: raw 32 bytes (as the carrier publishes it) or SPKI DER. */
export function ed25519PublicKey(base64: string): KeyObject | null {
  try {
    const bytes = Buffer.from(base64.trim(), 'base64');
    const der = bytes.length === 32 ? Buffer.concat([ED25519_SPKI_PREFIX, bytes]) : bytes;
    const key = createPublicKey({ key: der, format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ed25519' ? key : null;
  } catch {
    return null;
  }
}

/**
 * carrier_a: Ed25519 over `<timestamp>|<raw body>`, timestamp in unix seconds within the window.
 * The window is checked before the signature so a stale replay costs no verification.
 */
export function verifyEd25519(
  rawBody: Uint8Array,
  publicKeyBase64: string,
  signatureHeader: string | undefined,
  timestampHeader: string | undefined,
  now: Date = new Date(),
): VerifyOutcome {
  if (!signatureHeader || !timestampHeader || !/^\d{1,12}$/.test(timestampHeader)) return 'malformed';
  const signature = Buffer.from(signatureHeader, 'base64');
  if (signature.length !== 64) return 'malformed';
  if (Math.abs(now.getTime() / 1000 - Number(timestampHeader)) > ED25519_TOLERANCE_SECONDS) return 'stale';
  const key = ed25519PublicKey(publicKeyBase64);
  if (!key) return 'mismatch';
  const signed = Buffer.concat([Buffer.from(`${timestampHeader}|`, 'utf8'), rawBody]);
  try {
    return verify(null, signed, key, signature) ? 'ok' : 'mismatch';
  } catch {
    return 'mismatch';
  }
}
