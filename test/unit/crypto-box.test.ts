import { CryptoBox } from '../../src/lib/crypto-box';

describe('CryptoBox', () => {
  const box = new CryptoBox('unit-test-secret');

  it.each([
    ['ascii', 'https://example.com/reset?token=ddr_abc'],
    ['empty', ''],
    ['multi-byte', 'Nota: el cliente prometió pagar 😀 €'],
    ['long', 'x'.repeat(100_000)],
  ])('round-trips %s text', (_label, text) => {
    const sealed = box.encrypt(text);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/);
    expect(box.decrypt(sealed)).toBe(text);
  });

  it('never stores the plaintext and uses a fresh IV per message', () => {
    const a = box.encrypt('same secret');
    const b = box.encrypt('same secret');
    expect(a).not.toBe(b);
    expect(a).not.toContain('same secret');
    expect(a.split('.')[1]).not.toBe(b.split('.')[1]);
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
    [1, 'iv'],
    [2, 'tag'],
    [3, 'ciphertext'],
  ])('fails when the %s-th part (%s) is tampered', (index) => {
    const parts = box.encrypt('pay 100 USD on 2026-12-01').split('.');
    parts[index] = flipFirstByte(parts[index]!);
    expect(() => box.decrypt(parts.join('.'))).toThrow();
  });

  it('fails on a truncated ciphertext', () => {
    const parts = box.encrypt('pay 100 USD on 2026-12-01').split('.');
    parts[3] = Buffer.from(parts[3]!, 'base64url').subarray(0, 5).toString('base64url');
    expect(() => box.decrypt(parts.join('.'))).toThrow();
  });

  it.each([
    ['plain text', 'hello'],
    ['other version', 'v2.aaaa.bbbb.cccc'],
    ['missing parts', 'v1.aaaa'],
    ['empty', ''],
  ])('rejects a value that is not a sealed box (%s)', (_label, value) => {
    expect(() => box.decrypt(value)).toThrow();
  });
});
