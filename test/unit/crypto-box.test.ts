import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { CryptoBox, encryptionKeyId, isSealed, sealedKeyId } from '../../src/lib/crypto-box';

describe('CryptoBox', () => {
  const box = new CryptoBox('unit-test-secret');

  it.each([
    ['ascii', 'https://example.com/reset?token=ddr_abc'],
    ['empty', ''],
    ['multi-byte', 'Nota: el cliente prometió pagar 😀 €'],
    ['long', 'x'.repeat(100_000)],
  ])('round-trips %s text', (_label, text) => {
    const sealed = box.encrypt(text);
    expect(sealed).toMatch(/^v2\.[0-9a-f]{12}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]*$/);
    expect(box.decrypt(sealed)).toBe(text);
  });

  it('never stores the plaintext and uses a fresh IV per message', () => {
    const a = box.encrypt('same secret');
    const b = box.encrypt('same secret');
    expect(a).not.toBe(b);
    expect(a).not.toContain('same secret');
    expect(a.split('.')[2]).not.toBe(b.split('.')[2]);
  });

  it('decrypts with another instance built from the same secret', () => {
    expect(new CryptoBox('unit-test-secret').decrypt(box.encrypt('hello'))).toBe('hello');
  });

  it('fails with another key', () => {
    const sealed = box.encrypt('hello');
    expect(() => new CryptoBox('other-secret').decrypt(sealed)).toThrow();
  });

  function flipFirstByte(part: string): string {
    const bytes = Buffer.from(part, 'base64url');
    bytes[0] = bytes[0]! ^ 0x01;
    return bytes.toString('base64url');
  }

  it.each([
    [2, 'iv'],
    [3, 'tag'],
    [4, 'ciphertext'],
  ])('fails when the %s-th part (%s) is tampered', (index) => {
    const parts = box.encrypt('pay 100 USD on 2026-12-01').split('.');
    parts[index] = flipFirstByte(parts[index]!);
    expect(() => box.decrypt(parts.join('.'))).toThrow();
  });

  it('fails on a truncated ciphertext', () => {
    const parts = box.encrypt('pay 100 USD on 2026-12-01').split('.');
    parts[4] = Buffer.from(parts[4]!, 'base64url').subarray(0, 5).toString('base64url');
    expect(() => box.decrypt(parts.join('.'))).toThrow();
  });

  it.each([
    ['plain text', 'hello'],
    ['other version', 'v3.aaaa.bbbb.cccc'],
    ['v2 without a key id', 'v2.aaaa.bbbb.cccc'],
    ['missing parts', 'v1.aaaa'],
    ['empty', ''],
  ])('rejects a value that is not a sealed box (%s)', (_label, value) => {
    expect(() => box.decrypt(value)).toThrow();
  });

  it('rejects a short tag, even one the cipher would accept (GCM takes 4..16 bytes unless pinned)', () => {
    const parts = box.encrypt('pay 100 USD on 2026-12-01').split('.');
    for (const bytes of [4, 8, 12, 15]) {
      const short = [...parts];
      short[3] = Buffer.from(parts[3]!, 'base64url').subarray(0, bytes).toString('base64url');
      expect(() => box.decrypt(short.join('.'))).toThrow();
    }
  });

  it('binds the key id to the ciphertext: a header naming another configured key does not open', () => {
    const other = 'unit-test-other-secret';
    const both = new CryptoBox('unit-test-secret', [other]);
    const parts = both.encrypt('hello').split('.');
    parts[1] = encryptionKeyId(other);
    expect(() => both.decrypt(parts.join('.'))).toThrow();
  });
});

describe('CryptoBox key ids', () => {
  it('derives a stable 12-hex-digit id per secret, different for another secret', () => {
    expect(encryptionKeyId('alpha')).toMatch(/^[0-9a-f]{12}$/);
    expect(encryptionKeyId('alpha')).toBe(encryptionKeyId('alpha'));
    expect(encryptionKeyId('alpha')).not.toBe(encryptionKeyId('beta'));
    // Not a prefix of the cipher key (the SHA-256 of the secret): the id is an HKDF output of its own.
    expect(createHash('sha256').update('alpha').digest('hex')).not.toContain(encryptionKeyId('alpha'));
  });

  it('names the current key in every ciphertext', () => {
    const box = new CryptoBox('alpha', ['beta']);
    expect(box.currentKeyId).toBe(encryptionKeyId('alpha'));
    const sealed = box.encrypt('x');
    expect(sealedKeyId(sealed)).toBe(encryptionKeyId('alpha'));
    expect(box.isCurrent(sealed)).toBe(true);
  });

  it('decrypts by key id: a previous key still reads, a key not configured does not', () => {
    const old = new CryptoBox('alpha');
    const sealed = old.encrypt('card on file');
    const rotated = new CryptoBox('beta', ['alpha']);
    expect(rotated.decrypt(sealed)).toBe('card on file');
    expect(rotated.isCurrent(sealed)).toBe(false);
    const resealed = rotated.reseal(sealed);
    expect(sealedKeyId(resealed)).toBe(encryptionKeyId('beta'));
    expect(rotated.decrypt(resealed)).toBe('card on file');
    expect(() => new CryptoBox('beta').decrypt(sealed)).toThrow(/not configured/);
    expect(() => old.decrypt(resealed)).toThrow(/not configured/);
  });

  /** A ciphertext exactly as the CryptoBox before key ids wrote it (v1, SHA-256 of the secret, no AAD). */
  function legacySeal(secret: string, plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', createHash('sha256').update(secret, 'utf8').digest(), iv);
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  it('opens the old format (v1, no key id) under the current or a previous key', () => {
    const sealed = legacySeal('alpha', 'legacy note');
    expect(isSealed(sealed)).toBe(true);
    expect(sealedKeyId(sealed)).toBeNull();
    expect(new CryptoBox('alpha').decrypt(sealed)).toBe('legacy note');
    const rotated = new CryptoBox('beta', ['gamma', 'alpha']);
    expect(rotated.decrypt(sealed)).toBe('legacy note');
    expect(rotated.isCurrent(sealed)).toBe(false);
    expect(rotated.isCurrent(rotated.reseal(sealed))).toBe(true);
    expect(() => new CryptoBox('beta', ['gamma']).decrypt(sealed)).toThrow(/any configured key/);
  });

  it('rejects a tampered or shortened tag of the old format', () => {
    const parts = legacySeal('alpha', 'legacy note').split('.');
    const flipped = Buffer.from(parts[2]!, 'base64url');
    flipped[0] = flipped[0]! ^ 0x80;
    expect(() => new CryptoBox('alpha').decrypt([parts[0], parts[1], flipped.toString('base64url'), parts[3]].join('.'))).toThrow();
    const short = Buffer.from(parts[2]!, 'base64url').subarray(0, 12).toString('base64url');
    expect(() => new CryptoBox('alpha').decrypt([parts[0], parts[1], short, parts[3]].join('.'))).toThrow();
  });

  it('tells sealed values from plain text', () => {
    const box = new CryptoBox('alpha');
    expect(isSealed(box.encrypt('x'))).toBe(true);
    expect(isSealed('v1.2.3.4')).toBe(false);
    expect(isSealed('1985-02-14')).toBe(false);
  });
});
