import { createPublicKey, type KeyObject } from 'node:crypto';
import { invalid, unprocessable } from '../../lib/errors';

/**
 * Domain rules of SMS providers. Pure. The route checks JSON types and unknown keys (400
 * bad_request); a rule on a well-typed value is 400 invalid, except the egress refusal of
 * base_url, which SPEC makes 422 unprocessable (the service owns that one: it needs DNS).
 */

export const SMS_REGIONS = ['us', 'mx', 'eu'] as const;
export const SMS_PROVIDER_STATUSES = ['active', 'disabled', 'retired'] as const;
export type SmsProviderStatus = (typeof SMS_PROVIDER_STATUSES)[number];
export const NAME_MAX_CHARS = 200;
export const BASE_URL_MAX_CHARS = 2048;
export const SECRET_MAX_CHARS = 4096;

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): a raw 32-byte key follows it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function nameOf(raw: string): string {
  const name = raw.trim();
  // Code points, as the published maxLength counts them.
  if (name.length === 0 || [...name].length > NAME_MAX_CHARS) throw invalid(`name must be 1 to ${NAME_MAX_CHARS} characters`);
  return name;
}

/**
 * Parses a carrier_a webhook key. Accepted forms, all of one Ed25519 public key: the raw 32 bytes
 * in base64 (what the provider's portal shows), the SPKI DER in base64, or a PEM
 * `-----BEGIN PUBLIC KEY-----` block. Anything else is refused, so a key that could never verify
 * a signature is caught when it is stored rather than when every webhook starts failing.
 */
export function ed25519PublicKeyOf(text: string): KeyObject | null {
  const trimmed = text.trim();
  try {
    if (trimmed.startsWith('-----BEGIN')) {
      const key = createPublicKey({ key: trimmed, format: 'pem' });
      return key.asymmetricKeyType === 'ed25519' ? key : null;
    }
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || trimmed.length % 4 !== 0) return null;
    const bytes = Buffer.from(trimmed, 'base64');
    const der = bytes.length === 32 ? Buffer.concat([ED25519_SPKI_PREFIX, bytes]) : bytes;
    if (der.length !== ED25519_SPKI_PREFIX.length + 32 || !der.subarray(0, ED25519_SPKI_PREFIX.length).equals(ED25519_SPKI_PREFIX)) return null;
    const key = createPublicKey({ key: der, format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ed25519' ? key : null;
  } catch {
    return null;
  }
}

/** The length rule, and for carrier_a the key rule; the secret itself never appears in a message. */
export function assertWebhookSecret(adapter: string, secret: string): void {
  if (secret.trim().length === 0) throw invalid('webhook_secret must not be blank (send null to remove it)');
  if ([...secret].length > SECRET_MAX_CHARS) throw invalid(`webhook_secret must be at most ${SECRET_MAX_CHARS} characters`);
  // A rule across two fields (the adapter decides what the secret must be): semantics, not shape.
  if (adapter === 'carrier_a' && ed25519PublicKeyOf(secret) === null) {
    throw unprocessable(
      'webhook_secret of a carrier_a provider must be an Ed25519 public key: 32 raw bytes or SPKI DER in base64, or a PEM PUBLIC KEY block',
    );
  }
}

export const API_KEY_MAX_CHARS = 4096;

/**
 * A provider API key is sent as `Authorization: Bearer <key>`: printable ASCII without spaces, so
 * it can never break or add a header line. The key itself never appears in a message.
 */
export function assertApiKey(key: string): void {
  if (key.length === 0) throw invalid('api_key must not be empty (send null to remove it)');
  if (key.length > API_KEY_MAX_CHARS) throw invalid(`api_key must be at most ${API_KEY_MAX_CHARS} characters`);
  if (!/^[\x21-\x7e]+$/.test(key)) throw invalid('api_key must be printable ASCII without spaces or control characters');
}

export interface ProviderState {
  adapter: string;
  region: string;
  name: string;
  base_url: string | null;
  status: SmsProviderStatus;
}
