import { classifyBearer, mintToken, safeEqual, sha256Hex, type TokenPrefix } from '../../src/lib/tokens';

const BODY_RE = /^[A-Za-z0-9_-]{43}$/;

describe('mintToken', () => {
  it.each<TokenPrefix>(['dd_', 'ddu_', 'ddw_', 'ddr_', 'ddtt_', 'ddta_'])('mints %s tokens with 256 random bits', (prefix) => {
    const token = mintToken(prefix);
    expect(token.startsWith(prefix)).toBe(true);
    const body = token.slice(prefix.length);
    expect(body).toMatch(BODY_RE);
    expect(Buffer.from(body, 'base64url')).toHaveLength(32);
  });

  it('never repeats', () => {
    const seen = new Set(Array.from({ length: 200 }, () => mintToken('dd_')));
    expect(seen.size).toBe(200);
  });
});

describe('classifyBearer', () => {
  it('recognizes the three bearer kinds', () => {
    expect(classifyBearer(mintToken('dd_'))).toBe('dd_');
    expect(classifyBearer(mintToken('ddu_'))).toBe('ddu_');
    expect(classifyBearer(mintToken('ddw_'))).toBe('ddw_');
  });

  it('refuses tokens that are not bearers (reset links, ticket tokens)', () => {
    expect(classifyBearer(mintToken('ddr_'))).toBeNull();
    expect(classifyBearer(mintToken('ddtt_'))).toBeNull();
    expect(classifyBearer(mintToken('ddta_'))).toBeNull();
  });

  it.each([
    ['empty', ''],
    ['prefix only', 'dd_'],
    ['short body', `dd_${'a'.repeat(42)}`],
    ['long body', `dd_${'a'.repeat(44)}`],
    ['bad character', `dd_${'a'.repeat(42)}+`],
    ['padding', `dd_${'a'.repeat(42)}=`],
    ['unknown prefix', `dx_${'a'.repeat(43)}`],
    ['uppercase prefix', `DD_${'a'.repeat(43)}`],
    ['leading space', ` dd_${'a'.repeat(43)}`],
    ['trailing newline', `dd_${'a'.repeat(43)}\n`],
  ])('returns null for %s', (_label, token) => {
    expect(classifyBearer(token)).toBeNull();
  });

  it('does not confuse dd_ with ddu_ bodies', () => {
    // "dd_" followed by a body that itself starts with "u_" is a dd_ key of the right length only if 43 chars.
    expect(classifyBearer(`dd_u_${'a'.repeat(41)}`)).toBe('dd_');
    expect(classifyBearer(`ddu_${'a'.repeat(43)}`)).toBe('ddu_');
  });
});

describe('safeEqual', () => {
  it('is true only for identical strings', () => {
    expect(safeEqual('secret-token', 'secret-token')).toBe(true);
    expect(safeEqual('secret-token', 'secret-tokeN')).toBe(false);
    expect(safeEqual('secret-token', 'secret-token ')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual('', 'x')).toBe(false);
    expect(safeEqual('x', '')).toBe(false);
  });

  it('handles different lengths and multi-byte text without throwing', () => {
    expect(safeEqual('a', 'a'.repeat(1000))).toBe(false);
    expect(safeEqual('ñandú', 'ñandú')).toBe(true);
    expect(safeEqual('ñandú', 'nandu')).toBe(false);
  });
});

describe('sha256Hex', () => {
  it('is the hex sha256 of the UTF-8 text', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('é')).toMatch(/^[0-9a-f]{64}$/);
    expect(sha256Hex('é')).not.toBe(sha256Hex('e'));
  });
});
