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
      return value as (string | number)[];
    }
  } catch {
    // fall through to the one error below
  }
  throw badRequest('cursor is not valid');
}

/** `limit` query parameter with a route's default and maximum; above the maximum is 400. */
export function limitParam(defaultLimit: number, max: number) {
  return z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(defaultLimit)
    .openapi({ description: `Page size, default ${defaultLimit}, max ${max}`, type: 'integer' });
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
