import { createDecoyHash, hashPassword, PASSWORD_MAX, PASSWORD_MIN, passwordPolicyError, verifyPassword } from '../../src/lib/passwords';

const ITER = 1000;

describe('passwordPolicyError', () => {
  it('has the spec bounds', () => {
    expect(PASSWORD_MIN).toBe(12);
    expect(PASSWORD_MAX).toBe(128);
  });

  it.each([
    [0, false],
    [11, false],
    [12, true],
    [13, true],
    [127, true],
    [128, true],
    [129, false],
  ])('ASCII length %i allowed=%s', (length, allowed) => {
    const result = passwordPolicyError('a'.repeat(length));
    if (allowed) expect(result).toBeNull();
    else expect(result).toMatch(/12 to 128 characters/);
  });

  // Counted in characters (code points), not bytes or UTF-16 units.
  it.each([
    ['é (2 UTF-8 bytes)', 'é'],
    ['€ (3 UTF-8 bytes)', '€'],
    ['😀 (astral, 2 UTF-16 units)', '😀'],
  ])('counts %s as one character', (_label, ch) => {
    expect(passwordPolicyError(ch.repeat(11))).not.toBeNull();
    expect(passwordPolicyError(ch.repeat(12))).toBeNull();
    expect(passwordPolicyError(ch.repeat(128))).toBeNull();
    expect(passwordPolicyError(ch.repeat(129))).not.toBeNull();
  });

  it('counts mixed text by characters', () => {
    expect(passwordPolicyError('😀'.repeat(6) + 'abcdef')).toBeNull(); // 12 chars, 18 UTF-16 units
    expect(passwordPolicyError('😀'.repeat(5) + 'abcdef')).not.toBeNull(); // 11 chars, 16 UTF-16 units
  });
});

describe('hashPassword / verifyPassword', () => {
  it('round-trips and rejects a wrong password', async () => {
    const hash = await hashPassword('correct horse battery staple', ITER);
    expect(hash).toMatch(/^pbkdf2_sha512\$1000\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    await expect(verifyPassword('correct horse battery staple', hash)).resolves.toBe(true);
    await expect(verifyPassword('correct horse battery stapl', hash)).resolves.toBe(false);
    await expect(verifyPassword('Correct horse battery staple', hash)).resolves.toBe(false);
    await expect(verifyPassword('', hash)).resolves.toBe(false);
  });

  it('salts every hash', async () => {
    const a = await hashPassword('same password here', ITER);
    const b = await hashPassword('same password here', ITER);
    expect(a).not.toBe(b);
    await expect(verifyPassword('same password here', a)).resolves.toBe(true);
    await expect(verifyPassword('same password here', b)).resolves.toBe(true);
  });

  it('handles multi-byte passwords', async () => {
    const pw = 'contraseña-😀-пароль';
    const hash = await hashPassword(pw, ITER);
    await expect(verifyPassword(pw, hash)).resolves.toBe(true);
    // No normalization: the decomposed spelling is a different password.
    expect(pw.normalize('NFD')).not.toBe(pw);
    await expect(verifyPassword(pw.normalize('NFD'), hash)).resolves.toBe(false);
  });

  it('keeps the iteration count in the hash (a stored cost keeps verifying after the setting changes)', async () => {
    const hash = await hashPassword('twelve chars!', 2000);
    expect(hash.split('$')[1]).toBe('2000');
    await expect(verifyPassword('twelve chars!', hash)).resolves.toBe(true);
  });

  it.each([
    ['empty', ''],
    ['other scheme', 'bcrypt$10$abc$def'],
    ['missing parts', 'pbkdf2_sha512$1000$abc'],
    ['empty key', 'pbkdf2_sha512$1000$c2FsdA==$'],
  ])('returns false for a malformed stored hash (%s)', async (_label, stored) => {
    await expect(verifyPassword('whatever password', stored)).resolves.toBe(false);
  });

  it('detects a tampered hash', async () => {
    const hash = await hashPassword('correct horse battery staple', ITER);
    const parts = hash.split('$');
    const key = Buffer.from(parts[3]!, 'base64');
    key[0] = key[0]! ^ 1;
    parts[3] = key.toString('base64');
    await expect(verifyPassword('correct horse battery staple', parts.join('$'))).resolves.toBe(false);
  });

  it('createDecoyHash yields a verifiable-format hash that matches no guessable password', async () => {
    const decoy = await createDecoyHash(ITER);
    expect(decoy.startsWith('pbkdf2_sha512$1000$')).toBe(true);
    await expect(verifyPassword('', decoy)).resolves.toBe(false);
    await expect(verifyPassword('correct horse battery staple', decoy)).resolves.toBe(false);
  });
});

describe('verifyPassword with a malformed stored hash', () => {
  it.each([
    ['pbkdf2_sha512$abc$c2FsdA==$a2V5'],
    ['pbkdf2_sha512$0$c2FsdA==$a2V5'],
    ['pbkdf2_sha512$-5$c2FsdA==$a2V5'],
    ['pbkdf2_sha512$1.5$c2FsdA==$a2V5'],
    ['pbkdf2_sha512$999999999999$c2FsdA==$a2V5'],
    ['pbkdf2_sha512$1000$c2FsdA==$'],
    ['bcrypt$1000$c2FsdA==$a2V5'],
    [''],
  ])('answers false for %j instead of throwing or burning CPU', async (stored) => {
    await expect(verifyPassword('whatever password', stored)).resolves.toBe(false);
  });
});
