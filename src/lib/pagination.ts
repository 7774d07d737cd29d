import { badRequest } from './errors';
import { z } from './openapi';

/**
 * Keyset cursors: the sort key of a page's last row, written plainly. Clients treat a cursor as
 * opaque, but its form is published as a pattern, and every string the pattern admits is a
 * position in the list, so "a cursor" means the same thing to the document and to the server:
 * - (instant, id) lists: the instant as RFC 3339 UTC with milliseconds, `_`, the row's uuid;
 * - the DID list (ordered by number): the E.164 number without its plus (no percent-encoding).
 * Anything else is 400 bad_request. An impossible calendar day (Feb 30) is the position it rolls
 * over to, as a keyset position needs no more than an order.
 */
export const TIMESTAMP_ID_CURSOR_PATTERN =
  '^[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9][.][0-9]{3}Z_' +
  '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const E164_CURSOR_PATTERN = '^[1-9][0-9]{6,14}$';

const TIMESTAMP_ID_CURSOR = new RegExp(TIMESTAMP_ID_CURSOR_PATTERN);
const E164_CURSOR = new RegExp(E164_CURSOR_PATTERN);

/** The cursor of a row keyed [instant ISO string, uuid] or [E.164 number]. */
export function encodeCursor(key: readonly string[]): string {
  if (key.length === 2 && TIMESTAMP_ID_CURSOR.test(`${key[0]}_${key[1]}`)) return `${key[0]}_${key[1]!.toLowerCase()}`;
  if (key.length === 1 && E164_CURSOR.test(key[0]!.slice(1)) && key[0]!.startsWith('+')) return key[0]!.slice(1);
  throw new Error(`pagination: no cursor form for a key of ${key.length} part(s)`);
}

export function decodeTimestampIdCursor(cursor: string): { at: Date; id: string } {
  const m = TIMESTAMP_ID_CURSOR.exec(cursor);
  if (!m) throw badRequest('cursor is not valid');
  const [date, rest] = [cursor.slice(0, 10), cursor.slice(11)];
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
  const [h, mi, sec] = rest.slice(0, 8).split(':').map(Number) as [number, number, number];
  const ms = Number(rest.slice(9, 12));
  const at = new Date(Date.UTC(y, mo - 1, d, h, mi, sec, ms));
  return { at, id: cursor.slice(25).toLowerCase() };
}

export function decodeE164Cursor(cursor: string): string {
  if (!E164_CURSOR.test(cursor)) throw badRequest('cursor is not valid');
  return `+${cursor}`;
}

/**
 * Prisma arguments for a page ordered by (createdAt, id), oldest first, starting after the cursor.
 * Fetches one row more than the page so paginate() knows whether another page follows.
 */
export function createdAtPageArgs(cursor: string | undefined, limit: number) {
  const after = cursor ? decodeTimestampIdCursor(cursor) : null;
  return {
    where: after ? { OR: [{ createdAt: { gt: after.at } }, { createdAt: after.at, id: { gt: after.id } }] } : {},
    orderBy: [{ createdAt: 'asc' as const }, { id: 'asc' as const }],
    take: limit + 1,
  };
}

export const createdAtKey = (row: { createdAt: Date; id: string }): string[] => [row.createdAt.toISOString(), row.id];

/** `limit` query parameter with a route's default and maximum; above the maximum is 400. */
export function limitParam(defaultLimit: number, max: number) {
  return z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(defaultLimit)
    .openapi({ description: `Page size, default ${defaultLimit}, max ${max}`, type: 'integer', minimum: 1, maximum: max, default: defaultLimit });
}

export const cursorParam = z
  .string()
  .regex(TIMESTAMP_ID_CURSOR)
  .optional()
  .openapi({ description: 'Opaque cursor from next_cursor', pattern: TIMESTAMP_ID_CURSOR_PATTERN });

/** The DID list's cursor (it pages by number). */
export const e164CursorParam = z
  .string()
  .regex(E164_CURSOR)
  .optional()
  .openapi({ description: 'Opaque cursor from next_cursor', pattern: E164_CURSOR_PATTERN });

/**
 * Takes `limit + 1` rows fetched in order and returns the page plus the cursor of its last row
 * when more rows follow.
 */
export function paginate<T>(rows: T[], limit: number, keyOf: (row: T) => string[]) {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor = rows.length > limit && last !== undefined ? encodeCursor(keyOf(last)) : null;
  return { page, nextCursor };
}
