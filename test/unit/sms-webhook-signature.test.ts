import { generateKeyPairSync, sign } from 'node:crypto';
import { ed25519PublicKey, hmacSignature, verifyEd25519, verifyHmac } from '../../src/modules/sms-webhooks/signature';

const body = Buffer.from('{"message_id":"m-1","status":"delivered"}');

describe('HMAC signature (http, mock)', () => {
  const secret = 'provider-secret';
  const good = hmacSignature(body, secret);

  it('accepts the lowercase hex HMAC-SHA256 of the raw body', () => {
    expect(good).toMatch(/^[0-9a-f]{64}$/);
    expect(verifyHmac(body, secret, good)).toBe('ok');
  });

  it('refuses a signature over other bytes, with another key, or of the wrong shape', () => {
    expect(verifyHmac(Buffer.from(`${body.toString()} `), secret, good)).toBe('mismatch');
    expect(verifyHmac(body, 'other-secret', good)).toBe('mismatch');
    expect(verifyHmac(body, secret, good.toUpperCase())).toBe('malformed');
    expect(verifyHmac(body, secret, good.slice(2))).toBe('malformed');
    expect(verifyHmac(body, secret, `sha256=${good}`)).toBe('malformed');
    expect(verifyHmac(body, secret, undefined)).toBe('malformed');
    expect(verifyHmac(body, secret, '')).toBe('malformed');
  });
});

describe('Ed25519 signature (carrier_a)', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const raw = spki.subarray(spki.length - 32).toString('base64');
  const now = new Date('2026-11-24T12:00:00Z');
  const ts = String(Math.floor(now.getTime() / 1000));
  const signed = (t: string, b: Buffer) => sign(null, Buffer.concat([Buffer.from(`${t}|`), b]), privateKey).toString('base64');

  it('reads the public key raw or as SPKI DER', () => {
    expect(ed25519PublicKey(raw)?.asymmetricKeyType).toBe('ed25519');
    expect(ed25519PublicKey(spki.toString('base64'))?.asymmetricKeyType).toBe('ed25519');
    expect(ed25519PublicKey('not a key')).toBeNull();
  });

  it('accepts a signature over "<timestamp>|<raw body>" inside the window', () => {
    expect(verifyEd25519(body, raw, signed(ts, body), ts, now)).toBe('ok');
    expect(verifyEd25519(body, spki.toString('base64'), signed(ts, body), ts, now)).toBe('ok');
    const early = String(Number(ts) - 299);
    expect(verifyEd25519(body, raw, signed(early, body), early, now)).toBe('ok');
  });

  it('refuses stale and future timestamps (±5 minutes)', () => {
    const old = String(Number(ts) - 301);
    const future = String(Number(ts) + 301);
    expect(verifyEd25519(body, raw, signed(old, body), old, now)).toBe('stale');
    expect(verifyEd25519(body, raw, signed(future, body), future, now)).toBe('stale');
  });

  it('refuses forged bodies, swapped timestamps, other keys and malformed headers', () => {
    expect(verifyEd25519(Buffer.from('{}'), raw, signed(ts, body), ts, now)).toBe('mismatch');
    const other = String(Number(ts) + 1);
    expect(verifyEd25519(body, raw, signed(ts, body), other, now)).toBe('mismatch');
    const stranger = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    expect(verifyEd25519(body, stranger, signed(ts, body), ts, now)).toBe('mismatch');
    expect(verifyEd25519(body, 'garbage', signed(ts, body), ts, now)).toBe('mismatch');
    expect(verifyEd25519(body, raw, undefined, ts, now)).toBe('malformed');
    expect(verifyEd25519(body, raw, signed(ts, body), undefined, now)).toBe('malformed');
    expect(verifyEd25519(body, raw, signed(ts, body), 'yesterday', now)).toBe('malformed');
    expect(verifyEd25519(body, raw, 'c2hvcnQ=', ts, now)).toBe('malformed');
  });
});
