import { AppError } from '../../src/lib/errors';
import { cursorParam, decodeCursor, decodeTimestampIdCursor, encodeCursor, limitParam, paginate } from '../../src/lib/pagination';

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

describe('cursor encoding', () => {
  it('round-trips string and number keys', () => {
    const key = ['2026-11-22T10:00:00.000Z', '6f1c2f0e-2b8a-4c1e-9a57-1f0f8a7c9d10'];
    const cursor = encodeCursor(key);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/); // base64url: safe in a query string unescaped
    expect(decodeCursor(cursor, 2)).toEqual(key);
    expect(decodeCursor(encodeCursor([42, 'x', -1.5]), 3)).toEqual([42, 'x', -1.5]);
  });

  it('round-trips non-ASCII text', () => {
    expect(decodeCursor(encodeCursor(['Ñandú 😀']), 1)).toEqual(['Ñandú 😀']);
  });

  it('is opaque (not the raw key text)', () => {
    expect(encodeCursor(['abc', 'def'])).not.toContain('abc');
  });

  it.each([
    ['empty', ''],
    ['not base64 JSON', 'not-a-cursor'],
    ['garbage characters', '%%%%'],
    ['JSON object', Buffer.from('{"a":1}').toString('base64url')],
    ['JSON string', Buffer.from('"abc"').toString('base64url')],
    ['JSON null', Buffer.from('null').toString('base64url')],
    ['nested array', Buffer.from('[["a"],"b"]').toString('base64url')],
    ['null element', Buffer.from('[null,"b"]').toString('base64url')],
    ['boolean element', Buffer.from('[true,"b"]').toString('base64url')],
  ])('rejects a bad cursor (%s) with 400 bad_request', (_label, cursor) => {
    expectBadCursor(() => decodeCursor(cursor, 2));
  });

  it('rejects a cursor of the wrong arity', () => {
    const cursor = encodeCursor(['a', 'b']);
    expectBadCursor(() => decodeCursor(cursor, 1));
    expectBadCursor(() => decodeCursor(cursor, 3));
    expectBadCursor(() => decodeCursor(encodeCursor([]), 2));
  });
});

describe('paginate', () => {
  const rows = Array.from({ length: 5 }, (_, i) => ({ id: `id-${i}`, at: i }));
  const keyOf = (r: { id: string; at: number }) => [r.at, r.id];

  it('returns the first `limit` rows and a cursor of the last one when more follow', () => {
    const { page, nextCursor } = paginate(rows, 4, keyOf);
    expect(page.map((r) => r.id)).toEqual(['id-0', 'id-1', 'id-2', 'id-3']);
    expect(nextCursor).not.toBeNull();
    expect(decodeCursor(nextCursor!, 2)).toEqual([3, 'id-3']);
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

  it('accepts an optional non-empty cursor up to 512 characters', () => {
    expect(cursorParam.parse(undefined)).toBeUndefined();
    expect(cursorParam.safeParse('').success).toBe(false);
    expect(cursorParam.safeParse('a'.repeat(512)).success).toBe(true);
    expect(cursorParam.safeParse('a'.repeat(513)).success).toBe(false);
  });
});

describe('decodeTimestampIdCursor', () => {
  const id = '6F1C2F0E-2B8A-4C1E-9A57-1F0F8A7C9D10';

  it('round-trips a (timestamp, uuid) key and lower-cases the id', () => {
    const at = '2026-11-22T10:00:00.123Z';
    expect(decodeTimestampIdCursor(encodeCursor([at, id]))).toEqual({ at: new Date(at), id: id.toLowerCase() });
  });

  it.each([
    [['not-a-date', id]],
    [['2026-11-22T10:00:00Z', 'not-a-uuid']],
    [[12, id]],
    [['2026-11-22T10:00:00Z', 7]],
  ])('refuses %j with 400 before any query sees it', (key) => {
    expectBadCursor(() => decodeTimestampIdCursor(encodeCursor(key)));
  });
});
