import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, parse } from 'csv-parse';
import { AppError, badRequest, payloadTooLarge, unprocessable, unsupportedMediaType } from './errors';
import { appendAudit, type AuditEntry } from './audit';
import type { Database } from './db';
import { withTenant } from './tenancy';

/**
 * Streaming reader for the tenant CSV imports (suppressions, reassigned numbers). The body is
 * counted and parsed as it arrives; nothing is buffered beyond the rows themselves.
 */

/** SPEC "Limits", suppression CSV (the reassigned-numbers import uses the same limits). */
export const CSV_IMPORT_LIMITS = {
  maxBytes: 1_000_000,
  maxDataRows: 10_000,
  /** Entries listed in `rejected`; `rejected_count` is the true total. */
  maxRejectedListed: 100,
} as const;

/** First-cell values that mark the first row as a header (case-insensitive). */
export const NUMBER_HEADER_NAMES: ReadonlySet<string> = new Set(['number', 'phone', 'phone_number', 'telephone', 'e164', 'msisdn']);

export interface CsvDataRow {
  /** 1-based line of the file on which the row starts (a quoted field may span lines). */
  line: number;
  cells: string[];
}

export interface CsvReadResult {
  /** True when the first row was a header (it is not in `rows`). */
  header: boolean;
  rows: CsvDataRow[];
}

export interface CsvReadOptions {
  maxBytes?: number;
  maxDataRows?: number;
  headerNames?: ReadonlySet<string>;
}

/** Line breaks in a piece of the file: CRLF, LF and a lone CR each count once. */
export function countLineBreaks(text: string): number {
  return text.match(/\r\n|\r|\n/g)?.length ?? 0;
}

const ACCEPTED_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);

/**
 * The media-type checks the global JSON-only middleware leaves to the route: a charset other than
 * UTF-8, a compressed body, and a type other than text/csv on an empty body are 415.
 */
export function assertCsvRequest(contentType: string | undefined, contentEncoding: string | undefined): void {
  // The global check skips empty bodies; a declared type other than text/csv is still refused.
  const essence = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (essence !== '' && essence !== 'text/csv') throw unsupportedMediaType('request body must be text/csv');
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && !ACCEPTED_CHARSETS.has(charset)) throw unsupportedMediaType('request body must be text/csv in UTF-8');
  const encoding = (contentEncoding ?? '').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') throw unsupportedMediaType('compressed request bodies are not accepted');
}

/** 413 when a declared Content-Length is over the limit, before a byte of the body is read. */
export function assertDeclaredLength(contentLength: string | undefined, maxBytes = CSV_IMPORT_LIMITS.maxBytes): void {
  if (contentLength !== undefined && Number(contentLength) > maxBytes) throw tooLarge(maxBytes);
}

const tooLarge = (maxBytes: number) => payloadTooLarge(`CSV body exceeds ${maxBytes} bytes`);

async function* countedChunks(body: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<Uint8Array> {
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(maxBytes);
    yield chunk;
  }
}

function csvErrorMessage(err: CsvError): string {
  // csv-parse words its messages for programmers; the code is stable.
  const what: Record<string, string> = {
    CSV_QUOTE_NOT_CLOSED: 'a quoted field is never closed',
    CSV_INVALID_CLOSING_QUOTE: 'a closing quote is followed by something other than a comma or a line break',
    INVALID_OPENING_QUOTE: 'a quote appears inside an unquoted field',
  };
  return `malformed CSV: ${what[err.code] ?? err.message}`;
}

/**
 * Reads `body` as CSV: blank lines, whitespace-only rows and lines starting with `#` are skipped; a
 * first row whose first cell is one of `headerNames` is the header. A quote inside an unquoted
 * field is kept as data. Throws 413 past `maxBytes` (counted while streaming), 422 past
 * `maxDataRows` data rows, 400 for malformed CSV (a quoted field that is never closed).
 */
export async function readCsvRows(body: AsyncIterable<Uint8Array> | null, options: CsvReadOptions = {}): Promise<CsvReadResult> {
  const maxBytes = options.maxBytes ?? CSV_IMPORT_LIMITS.maxBytes;
  const maxDataRows = options.maxDataRows ?? CSV_IMPORT_LIMITS.maxDataRows;
  const headerNames = options.headerNames ?? NUMBER_HEADER_NAMES;
  const result: CsvReadResult = { header: false, rows: [] };
  if (!body) return result;

  const parser = parse({
    bom: true,
    comment: '#',
    comment_no_infix: true,
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    // A stray quote inside an unquoted field is kept as data (the row is judged on its content);
    // a quoted field that is never closed is still malformed.
    relax_quotes: true,
    skip_empty_lines: true,
    raw: true,
  });
  // Lines consumed by earlier records (their raw text includes the skipped lines before them).
  let linesBefore = 0;
  let seenFirstRow = false;
  const consume = async (records: AsyncIterable<{ record: string[]; raw: string }>) => {
    for await (const { record, raw } of records) {
      const endsWithBreak = /[\r\n]$/.test(raw);
      const lastLine = linesBefore + countLineBreaks(raw) + (endsWithBreak ? 0 : 1);
      linesBefore += countLineBreaks(raw);
      const line = lastLine - record.reduce((n, cell) => n + countLineBreaks(cell), 0);
      if (record.every((cell) => cell.trim() === '')) continue;
      if (!seenFirstRow) {
        seenFirstRow = true;
        if (headerNames.has(record[0]!.trim().toLowerCase())) {
          result.header = true;
          continue;
        }
      }
      if (result.rows.length >= maxDataRows) {
        throw unprocessable(`the file has more than ${maxDataRows} data rows; nothing was stored`);
      }
      result.rows.push({ line, cells: record });
    }
  };

  try {
    await pipeline(Readable.from(countedChunks(body, maxBytes)), parser, consume);
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (err instanceof CsvError) throw badRequest(csvErrorMessage(err));
    throw err;
  }
  return result;
}

/**
 * How a rejected cell appears in a response: `***` and its last four characters, so a file row can
 * be found again without the response repeating whole phone numbers. An empty cell stays empty.
 */
export function maskCell(raw: string): string {
  const value = Array.from(raw.trim());
  return value.length === 0 ? '' : `***${value.slice(-4).join('')}`;
}

export interface RejectedRow<R extends string> {
  line: number;
  value: string;
  reason: R;
}

/** Rejections of one import: the true count, and the first `maxRejectedListed` of them in file order. */
export class Rejections<R extends string> {
  count = 0;
  readonly listed: RejectedRow<R>[] = [];

  constructor(private readonly cap: number = CSV_IMPORT_LIMITS.maxRejectedListed) {}

  add(line: number, rawValue: string, reason: R): void {
    this.count += 1;
    if (this.listed.length < this.cap) this.listed.push({ line, value: maskCell(rawValue), reason });
  }
}

/**
 * Stores an import: one set-based statement for all accepted rows (it must answer `recorded`, the
 * rows it newly wrote) and one audit entry, in one tenant transaction.
 */
export async function storeCsvImport(
  deps: { db: Database },
  tenantId: string,
  opts: {
    sql: string;
    /** Parameters after $1 (the tenant id); the statement is skipped when `rows` is 0. */
    params: unknown[];
    rows: number;
    audit: (recorded: number) => AuditEntry;
  },
): Promise<number> {
  return withTenant(
    deps.db,
    tenantId,
    async (tx) => {
      let recorded = 0;
      if (opts.rows > 0) {
        const result = await tx.$queryRawUnsafe<{ recorded: number }[]>(opts.sql, tenantId, ...opts.params);
        recorded = result[0]?.recorded ?? 0;
      }
      await appendAudit(tx, tenantId, opts.audit(recorded));
      return recorded;
    },
    { timeoutMs: 60_000 },
  );
}
