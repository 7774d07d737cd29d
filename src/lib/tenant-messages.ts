import type { PoolClient, QueryResult } from 'pg';
import type { Database } from './db';
import { assertTenantId } from './tenancy';

/** A statement prepared once per pooled connection (SQL-level PREPARE) and run with EXECUTE. */
export interface PreparedText {
  name: string;
  paramTypes: string[];
  text: string;
}

export interface OpeningMessage {
  /** Statements run right after the tenant is named, in the same message. */
  statements: string;
  /** Statements these messages EXECUTE; prepared on a connection the first time it meets them. */
  prepare: PreparedText[];
}

export interface ClosingMessage<T> {
  /** Statements sent together with COMMIT; null when there is nothing to write. */
  statements: string | null;
  /** Reads the closing statements' results (after COMMIT) into the answer; throws to refuse it. */
  answer(results: QueryResult[]): T;
}

/**
 * A string as a SQL literal, exactly as pg's `escapeLiteral` writes it (quotes doubled; with a
 * backslash, an E'' literal with backslashes doubled), in two passes over the text instead of
 * pg's one concatenation per character: a decision's evidence is a few kilobytes of JSON, and
 * pg's loop left about 100 KB of garbage a decision, whose collection paused the deciding
 * process about ten times a second.
 */
export function sqlLiteral(value: string): string {
  const quoted = value.replace(/'/g, "''");
  return value.includes('\\') ? ` E'${quoted.replace(/\\/g, '\\\\')}'` : `'${quoted}'`;
}

/** `EXECUTE name('<literal>', ...)`: every argument inlined as an escaped literal (null as NULL). */
export function executeText(name: string, args: (string | null)[]): string {
  return `EXECUTE ${name}(${args.map((a) => (a === null ? 'NULL' : sqlLiteral(a))).join(', ')})`;
}

const preparedOn = new WeakMap<PoolClient, Set<string>>();

const results = (r: QueryResult | QueryResult[]): QueryResult[] => (Array.isArray(r) ? r : [r]);

/**
 * A tenant transaction in exactly two round trips, for a path whose work needs the database's
 * answer once in the middle (compliance decisions: read the facts, decide in Node, write the
 * evidence). The first message opens the transaction, names the tenant as withTenantSql does
 * (local to the transaction) and runs `opening`; the second runs what `closing` makes of its
 * results, followed by COMMIT. Both use the simple protocol, so statements carry their values as
 * escaped literals (executeText) and their plans come from statements prepared per connection.
 * Any failure rolls back and throws; a connection whose prepared statements are in doubt is
 * discarded rather than returned to the pool.
 */
export async function withTenantMessages<T>(
  db: Database,
  tenantId: string,
  opening: OpeningMessage,
  closing: (opened: QueryResult[]) => Promise<ClosingMessage<T>>,
): Promise<T> {
  assertTenantId(tenantId);
  const client = await db.pool.connect();
  const known = preparedOn.get(client) ?? new Set<string>();
  const toPrepare = opening.prepare.filter((p) => !known.has(p.name));
  let discard = false;
  // A backend that dies between the two messages is reported as an event of the checked-out client:
  // unheard, it would crash the process; the next message fails on the dead connection instead.
  const lost = () => {
    discard = true;
  };
  client.on('error', lost);
  try {
    const head = [
      'BEGIN',
      // Safe to inline: a validated UUID.
      `SELECT set_config('app.tenant_id', '${tenantId.toLowerCase()}', true)`,
      ...toPrepare.map((p) => `PREPARE ${p.name}(${p.paramTypes.join(', ')}) AS ${p.text}`),
    ];
    let opened: QueryResult[];
    try {
      opened = results(await client.query(`${head.join(';\n')};\n${opening.statements}`)).slice(head.length);
    } catch (err) {
      // PREPARE is not transactional: some may exist now, and preparing them again would fail.
      discard = toPrepare.length > 0;
      throw err;
    }
    for (const p of toPrepare) known.add(p.name);
    preparedOn.set(client, known);

    const close = await closing(opened);
    const closed = results(await client.query(close.statements === null ? 'COMMIT' : `${close.statements};\nCOMMIT`));
    // COMMIT of a failed transaction answers ROLLBACK without an error.
    if (closed[closed.length - 1]?.command !== 'COMMIT') throw new Error('the transaction did not commit');
    return close.answer(closed.slice(0, -1));
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      discard = true;
    });
    throw err;
  } finally {
    client.off('error', lost);
    client.release(discard);
  }
}
