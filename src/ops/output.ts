import Table from 'cli-table3';
import { maskPhone } from '../lib/phone';

/** A command line the parser refused or that names something malformed: exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The operation ran and was refused or failed (a replay that diverged, a reset with no healthy point): exit code 1. */
export class OpsRefusal extends Error {
  constructor(
    message: string,
    /** What --json prints on stdout alongside the one-line reason on stderr. */
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'OpsRefusal';
  }
}

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are checked before anything connects: a typo is a usage error, not a "not found" from a query. */
export function uuidArg(what: string, value: string): string {
  if (!UUID_RE.test(value)) throw new UsageError(`${what} must be a UUID (got "${value}")`);
  return value.toLowerCase();
}

export function positiveIntArg(what: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${what} must be a positive integer (got "${value}")`);
  }
  return Number(value);
}

// A whole value that reads as a phone number (E.164 or bare national digits). Ids, timestamps and
// counters never match: they are UUIDs, ISO strings or JSON numbers.
const PHONE_RE = /^\+?[1-9]\d{6,14}$/;

/**
 * Every string that looks like a phone number is cut to its last four digits, whatever field it
 * sits in (a filter's free text, a failure message quoting a number): operators read this output
 * in shared terminals and tickets.
 */
export function maskPhones<T>(value: T): T {
  if (typeof value === 'string') {
    const masked = PHONE_RE.test(value) ? maskPhone(value) : value.replace(/\+\d{7,15}/g, (m) => maskPhone(m)!);
    return masked as T;
  }
  if (Array.isArray(value)) return value.map((v: unknown) => maskPhones(v)) as T;
  if (value instanceof Date) return value;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskPhones(v)])) as T;
  }
  return value;
}

type Cell = string | number | boolean | null | undefined;

/** A plain table (no colour codes: the output is pasted into tickets and piped to grep). */
export function table(head: string[], rows: Cell[][]): string {
  const t = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) t.push(row.map((c) => (c === null || c === undefined ? '-' : String(c))));
  return t.toString();
}

/** Key/value pairs, one per line, for a single object. */
export function details(pairs: [string, Cell][]): string {
  const t = new Table({ style: { head: [], border: [] } });
  for (const [k, v] of pairs) t.push({ [k]: v === null || v === undefined ? '-' : String(v) });
  return t.toString();
}

export function toJson(data: unknown): string {
  return JSON.stringify(data, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2);
}
