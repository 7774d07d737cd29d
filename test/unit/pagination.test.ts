import { AppError } from '../../src/lib/errors';
import {
  cursorParam,
  decodeE164Cursor,
  decodeTimestampIdCursor,
  e164CursorParam,
  encodeCursor,
  limitParam,
  paginate,
  TIMESTAMP_ID_CURSOR_PATTERN,
} from '../../src/lib/pagination';

function expectBadCursor(fn: () => unknown) {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(AppError);
  expect((caught as AppError).status).toBe(400);
  expect((caught as AppError).code).toBe('bad_request');
  expect((caught as AppError).message).toBe('cursor is not valid');
}

const ID = '6F1C2F0E-2B8A-4C1E-9A57-1F0F8A7C9D10';

describe('cursor forms', () => {
  it('writes an (instant, id) key as the instant, an underscore and the lower-case id, safe in a query string', () => {
    const cursor = encodeCursor(['2026-11-22T10:00:00.123Z', ID]);
    expect(cursor).toBe(`2026-11-22T10:00:00.123Z_${ID.toLowerCase()}`);
    expect(encodeURIComponent(cursor)).toBe(cursor.replace(/:/g, '%3A'));
    expect(decodeTimestampIdCursor(cursor)).toEqual({ at: new Date('2026-11-22T10:00:00.123Z'), id: ID.toLowerCase() });
  });

  it('writes a DID list key as the number without its plus, and reads it back', () => {
    expect(encodeCursor(['+12125550100'])).toBe('12125550100');
    expect(decodeE164Cursor('12125550100')).toBe('+12125550100');
  });

  it('has no form for other keys (a programming error, not a client one)', () => {
    expect(() => encodeCursor(['a', 'b'])).toThrow(/no cursor form/);
    expect(() => encodeCursor(['12125550100'])).toThrow(/no cursor form/);
    expect(() => encodeCursor([])).toThrow(/no cursor form/);
  });

  it('reads every string the published pattern admits as a position: an impossible day rolls over', () => {
    expect(new RegExp(TIMESTAMP_ID_CURSOR_PATTERN).test(`2026-02-31T00:00:00.000Z_${ID}`)).toBe(true);
    expect(decodeTimestampIdCursor(`2026-02-31T00:00:00.000Z_${ID}`).at.toISOString()).toBe('2026-03-03T00:00:00.000Z');
  });

  it.each([
    ['empty', ''],
    ['a word', 'not-a-cursor'],
    ['the old base64url form', Buffer.from(JSON.stringify(['2026-11-22T10:00:00.000Z', ID])).toString('base64url')],
    ['no milliseconds', `2026-11-22T10:00:00Z_${ID}`],
    ['month 13', `2026-13-22T10:00:00.000Z_${ID}`],
    ['year 0000', `0000-11-22T10:00:00.000Z_${ID}`],
    ['hour 24', `2026-11-22T24:00:00.000Z_${ID}`],
    ['not a uuid', '2026-11-22T10:00:00.000Z_not-a-uuid'],
    ['an offset', `2026-11-22T10:00:00.000+01:00_${ID}`],
    ['trailing text', `2026-11-22T10:00:00.000Z_${ID}x`],
  ])('refuses an (instant, id) cursor that is %s with 400', (_label, cursor) => {
    expectBadCursor(() => decodeTimestampIdCursor(cursor));
  });

  it.each([[''], ['+12125550100'], ['0125550100'], ['12'], ['1212555010012345']])('refuses the DID cursor %j with 400', (cursor) => {
    expectBadCursor(() => decodeE164Cursor(cursor));
  });
});

describe('paginate', () => {
  const rows = Array.from({ length: 5 }, (_, i) => ({ id: `00000000-0000-4000-8000-00000000000${i}`, at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) }));
  const keyOf = (r: { id: string; at: Date }) => [r.at.toISOString(), r.id];

  it('returns the first `limit` rows and the cursor of the last one when more follow', () => {
    const { page, nextCursor } = paginate(rows, 4, keyOf);
    expect(page).toEqual(rows.slice(0, 4));
    expect(decodeTimestampIdCursor(nextCursor!)).toEqual({ at: rows[3]!.at, id: rows[3]!.id });
  });

  it('answers null next_cursor on the last page', () => {
    expect(paginate(rows, 5, keyOf).nextCursor).toBeNull();
    expect(paginate(rows, 10, keyOf)).toEqual({ page: rows, nextCursor: null });
    expect(paginate([], 10, keyOf)).toEqual({ page: [], nextCursor: null });
  });
});

describe('limitParam / cursorParam', () => {
  const limit = limitParam(100, 1000);

  it('defaults, coerces query strings and bounds the page size', () => {
    expect(limit.parse(undefined)).toBe(100);
    expect(limit.parse('25')).toBe(25);
    expect(limit.parse('1000')).toBe(1000);
    expect(limit.safeParse('1001').success).toBe(false);
    expect(limit.safeParse('0').success).toBe(false);
    expect(limit.safeParse('-1').success).toBe(false);
    expect(limit.safeParse('2.5').success).toBe(false);
    expect(limit.safeParse('abc').success).toBe(false);
  });

  it('validates cursors by their published pattern', () => {
    expect(cursorParam.parse(undefined)).toBeUndefined();
    expect(cursorParam.safeParse(`2026-11-22T10:00:00.000Z_${ID}`).success).toBe(true);
    expect(cursorParam.safeParse('').success).toBe(false);
    expect(cursorParam.safeParse('abc').success).toBe(false);
    expect(e164CursorParam.safeParse('12125550100').success).toBe(true);
    expect(e164CursorParam.safeParse(`2026-11-22T10:00:00.000Z_${ID}`).success).toBe(false);
  });
});
