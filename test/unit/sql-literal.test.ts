import { escapeLiteral } from 'pg';
import { executeText, sqlLiteral } from '../../src/lib/tenant-messages';

/** Deterministic pseudo-random numbers, so a failure names a reproducible case. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// What a literal can meet: quotes, backslashes, JSON escapes, a lone surrogate, NUL-free control
// characters, multi-byte text.
const ALPHABET = ["'", '\\', '"', 'a', 'Z', '0', ' ', '\n', '\t', '$', 'é', '€', '😀', '\ud83d', '{', '}', ':', ','];

describe('sqlLiteral', () => {
  it('writes every string exactly as pg.escapeLiteral does', () => {
    const random = mulberry32(0x5eed);
    for (let n = 0; n < 5000; n++) {
      let value = '';
      const length = Math.floor(random() * 40);
      for (let i = 0; i < length; i++) value += ALPHABET[Math.floor(random() * ALPHABET.length)];
      expect(sqlLiteral(value)).toBe(escapeLiteral(value));
    }
  });

  it.each([
    ['', "''"],
    ["it's", "'it''s'"],
    ['a\\b', " E'a\\\\b'"],
    ["\\'", " E'\\\\'''"],
    [JSON.stringify({ reason: 'said "stop"' }), ` E'{"reason":"said \\\\"stop\\\\""}'`],
  ])('%j is %s', (value, literal) => {
    expect(sqlLiteral(value)).toBe(literal);
  });

  it('is what executeText inlines, NULL for null', () => {
    expect(executeText('facts', ["o'k", null])).toBe("EXECUTE facts('o''k', NULL)");
  });
});
