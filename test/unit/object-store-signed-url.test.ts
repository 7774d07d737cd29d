import { createHmac, hkdfSync } from 'node:crypto';
import { UrlSigner } from '../../src/lib/object-store/signed-url';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const NOW_S = NOW.getTime() / 1000;
const signer = new UrlSigner({ secret: 'unit-test-encryption-key', publicBaseUrl: 'https://api.example.com/' });

function parse(url: string) {
  const u = new URL(url);
  return { path: u.pathname, key: u.pathname.replace(/^\/files\//, ''), expires: u.searchParams.get('expires')!, sig: u.searchParams.get('sig')!, name: u.searchParams.get('name') ?? undefined };
}

describe('UrlSigner', () => {
  const key = 'tenants/t1/recordings/2026/11/rec-1.wav';

  it('builds /files/<key>?expires=&sig= on the public base URL with expires_at matching', () => {
    const signed = signer.signedUrl(key, { expiresInSeconds: 300 }, NOW);
    const p = parse(signed.url);
    expect(signed.url.startsWith(`https://api.example.com/files/${key}?`)).toBe(true);
    expect(p.expires).toBe(String(NOW_S + 300));
    expect(p.sig).toMatch(/^[0-9a-f]{64}$/);
    expect(signed.expires_at).toBe('2026-11-24T12:05:00.000Z');
  });

  it('signs HMAC-SHA256 over "key\\nexpires" with an HKDF-SHA256 key derived from the secret, not the secret itself', () => {
    const p = parse(signer.signedUrl(key, { expiresInSeconds: 60 }, NOW).url);
    const derived = Buffer.from(hkdfSync('sha256', 'unit-test-encryption-key', Buffer.alloc(0), 'dialer-control-plane/object-store/signed-url/v1', 32));
    expect(p.sig).toBe(createHmac('sha256', derived).update(`${key}\n${p.expires}`).digest('hex'));
    expect(p.sig).not.toBe(createHmac('sha256', 'unit-test-encryption-key').update(`${key}\n${p.expires}`).digest('hex'));
  });

  it('verifies a valid signature up to and including the expiry second', () => {
    const p = parse(signer.signedUrl(key, { expiresInSeconds: 60 }, NOW).url);
    expect(signer.verifySignedPath(p.key, p.expires, p.sig, NOW)).toBe(true);
    expect(signer.verifySignedPath(p.key, Number(p.expires), p.sig, new Date((NOW_S + 60) * 1000))).toBe(true);
  });

  it('refuses an expired signature', () => {
    const p = parse(signer.signedUrl(key, { expiresInSeconds: 60 }, NOW).url);
    expect(signer.verifySignedPath(p.key, p.expires, p.sig, new Date((NOW_S + 60) * 1000 + 1))).toBe(false);
  });

  it('refuses a tampered key', () => {
    const p = parse(signer.signedUrl(key, { expiresInSeconds: 60 }, NOW).url);
    expect(signer.verifySignedPath(p.key.replace('rec-1', 'rec-2'), p.expires, p.sig, NOW)).toBe(false);
    expect(signer.verifySignedPath(`../${p.key}`, p.expires, p.sig, NOW)).toBe(false);
  });

  it('refuses a tampered expiry (extended or shortened)', () => {
    const p = parse(signer.signedUrl(key, { expiresInSeconds: 60 }, NOW).url);
    expect(signer.verifySignedPath(p.key, String(Number(p.expires) + 3600), p.sig, NOW)).toBe(false);
    expect(signer.verifySignedPath(p.key, String(Number(p.expires) - 1), p.sig, NOW)).toBe(false);
    expect(signer.verifySignedPath(p.key, `0${p.expires}`, p.sig, NOW)).toBe(false);
    expect(signer.verifySignedPath(p.key, `${p.expires}.0`, p.sig, NOW)).toBe(false);
  });

  it('refuses a tampered signature', () => {
    const p = parse(signer.signedUrl(key, { expiresInSeconds: 60 }, NOW).url);
    const flipped = `${p.sig.slice(0, -1)}${p.sig.endsWith('0') ? '1' : '0'}`;
    expect(signer.verifySignedPath(p.key, p.expires, flipped, NOW)).toBe(false);
    expect(signer.verifySignedPath(p.key, p.expires, p.sig.toUpperCase(), NOW)).toBe(false);
  });

  it.each([
    ['empty', ''],
    ['one byte short', 'ab'.repeat(31)],
    ['one byte long', 'ab'.repeat(33)],
    ['odd length', 'a'.repeat(63)],
    ['not hex', 'zz'.repeat(32)],
  ])('refuses a signature of the wrong length or alphabet (%s) without throwing', (_label, sig) => {
    const p = parse(signer.signedUrl(key, { expiresInSeconds: 60 }, NOW).url);
    expect(signer.verifySignedPath(p.key, p.expires, sig, NOW)).toBe(false);
  });

  it('refuses a signature made with another secret', () => {
    const other = new UrlSigner({ secret: 'another-key', publicBaseUrl: 'https://api.example.com' });
    const p = parse(other.signedUrl(key, { expiresInSeconds: 60 }, NOW).url);
    expect(signer.verifySignedPath(p.key, p.expires, p.sig, NOW)).toBe(false);
  });

  it('binds the download name into the signature', () => {
    const p = parse(signer.signedUrl(key, { expiresInSeconds: 60, downloadName: 'call 1.wav' }, NOW).url);
    expect(p.name).toBe('call 1.wav');
    expect(signer.verifySignedPath(p.key, p.expires, p.sig, NOW, p.name)).toBe(true);
    expect(signer.verifySignedPath(p.key, p.expires, p.sig, NOW, 'evil.exe')).toBe(false);
    expect(signer.verifySignedPath(p.key, p.expires, p.sig, NOW)).toBe(false);
  });

  it('sanitizes the download name before signing it', () => {
    const p = parse(signer.signedUrl(key, { expiresInSeconds: 60, downloadName: '../x"y\r\n.wav' }, NOW).url);
    expect(p.name).toBe('.._x_y__.wav');
  });

  it.each([0, -1, 1.5, 7 * 24 * 3600 + 1, Number.NaN])('rejects expiresInSeconds %p with a TypeError', (expiresInSeconds) => {
    expect(() => signer.signedUrl(key, { expiresInSeconds }, NOW)).toThrow(TypeError);
  });

  it('rejects an invalid key with a TypeError', () => {
    expect(() => signer.signedUrl('/etc/passwd', { expiresInSeconds: 60 }, NOW)).toThrow(TypeError);
  });

  it('refuses an empty secret', () => {
    expect(() => new UrlSigner({ secret: '', publicBaseUrl: 'https://api.example.com' })).toThrow(TypeError);
  });
});
