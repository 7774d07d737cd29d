import { escapeLiteral } from 'pg';
import { executeText, sqlLiteral } from '../../src/lib/tenant-messages';
import { mulberry32 } from '../helpers/seeded-random';

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
