import { badRequest } from './errors';
import { z } from './openapi';

/**
 * Opaque keyset cursors: base64url of a small JSON array (the sort key of the last row and its
 * id). A cursor that does not decode is 400 bad_request.
 */
export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, arity: number): (string | number)[] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === arity &&
      value.every((v) => typeof v === 'string' || typeof v === 'number')
    ) {
      return value;
    }
  } catch {
    // fall through to the one error below
  }
  throw badRequest('cursor is not valid');
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The common (timestamp, id) keyset cursor. decodeCursor only checks the JSON shape; this also
 * checks the parts, so a forged cursor is 400 and never reaches a query.
 */
export function decodeTimestampIdCursor(cursor: string): { at: Date; id: string } {
  const [at, id] = decodeCursor(cursor, 2);
  const when = typeof at === 'string' ? new Date(at) : new Date(NaN);
  if (Number.isNaN(when.getTime()) || typeof id !== 'string' || !UUID_RE.test(id)) {
    throw badRequest('cursor is not valid');
  }
  return { at: when, id: id.toLowerCase() };
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

export const cursorParam = z.string().min(1).max(512).optional().openapi({ description: 'Opaque cursor from next_cursor' });

/**
 * Takes `limit + 1` rows fetched in order and returns the page plus the cursor of its last row
 * when more rows follow.
 */
export function paginate<T>(rows: T[], limit: number, keyOf: (row: T) => (string | number)[]) {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor = rows.length > limit && last !== undefined ? encodeCursor(keyOf(last)) : null;
  return { page, nextCursor };
}
