import { AppError } from '../../src/lib/errors';
import { planReassignedImport, parseDisconnectionDate, utcToday } from '../../src/modules/reassigned-numbers/reassigned-number.rules';
import {
  assertCsvRequest,
  assertDeclaredLength,
  countLineBreaks,
  maskCell,
  readCsvRows,
  Rejections,
  type CsvDataRow,
} from '../../src/lib/csv-import';
import { cleanReason, planSuppressionImport } from '../../src/modules/suppressions/suppression.rules';

/** A web ReadableStream delivering `parts` as separate chunks, like a request body. */
function bodyOf(...parts: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const chunks = parts.map((p) => (typeof p === 'string' ? new TextEncoder().encode(p) : p));
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
}

async function appErrorOf(promise: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return { status: err.status, code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected an AppError');
}

const rows = (...list: [number, ...string[]][]): CsvDataRow[] => list.map(([line, ...cells]) => ({ line, cells }));

describe('readCsvRows', () => {
  it('reads rows with 1-based file line numbers, skipping blank, whitespace-only and # lines', async () => {
    const csv = ['number,reason', '', '# a comment, with "an odd quote', '+15552220001,asked', '   ', ',', '5552220002', '#another', '15552220003,x,extra'].join('\n');
    const result = await readCsvRows(bodyOf(csv));
    expect(result.header).toBe(true);
    expect(result.rows).toEqual([
      { line: 4, cells: ['+15552220001', 'asked'] },
      { line: 7, cells: ['5552220002'] },
      { line: 9, cells: ['15552220003', 'x', 'extra'] },
    ]);
  });

  it('counts lines the same way for CRLF, LF and CR files, and across quoted line breaks', async () => {
    for (const nl of ['\n', '\r\n', '\r']) {
      const csv = ['phone', '', '#c', `+15552220001,"two${nl}lines"`, '+15552220002', '', '"+15552220003"', ''].join(nl);
      const result = await readCsvRows(bodyOf(csv));
      expect({ nl, rows: result.rows.map((r) => r.line) }).toEqual({ nl, rows: [4, 6, 8] });
      expect(result.rows[0]!.cells[1]).toBe(`two${nl}lines`);
    }
  });

  it('numbers lines correctly when a record is split across chunks', async () => {
    const result = await readCsvRows(bodyOf('number\n+1555', '2220001,"a\n', 'b"\n\n+15552220002\n'));
    expect(result.rows).toEqual([
      { line: 2, cells: ['+15552220001', 'a\nb'] },
      { line: 5, cells: ['+15552220002'] },
    ]);
  });

  it.each(['number', 'PHONE', 'Phone_Number', 'telephone', 'E164', 'msisdn', ' number '])('detects the header %j', async (name) => {
    const result = await readCsvRows(bodyOf(`${name},reason\n+15552220001\n`));
    expect(result.header).toBe(true);
    expect(result.rows).toEqual([{ line: 2, cells: ['+15552220001'] }]);
  });

  it('treats only the first row as a possible header, and only by its first cell', async () => {
    const noHeader = await readCsvRows(bodyOf('name,phone\nphone\n'));
    expect(noHeader.header).toBe(false);
    expect(noHeader.rows).toEqual([
      { line: 1, cells: ['name', 'phone'] },
      { line: 2, cells: ['phone'] },
    ]);
    const afterComment = await readCsvRows(bodyOf('# export\n\nmsisdn\n+15552220001\n'));
    expect(afterComment.header).toBe(true);
    expect(afterComment.rows).toEqual([{ line: 4, cells: ['+15552220001'] }]);
  });

  it('ignores a UTF-8 byte order mark', async () => {
    const result = await readCsvRows(bodyOf(new Uint8Array([0xef, 0xbb, 0xbf]), 'number\n+15552220001'));
    expect(result).toEqual({ header: true, rows: [{ line: 2, cells: ['+15552220001'] }] });
  });

  it('returns nothing for an absent or empty body', async () => {
    expect(await readCsvRows(null)).toEqual({ header: false, rows: [] });
    expect(await readCsvRows(bodyOf(''))).toEqual({ header: false, rows: [] });
    expect(await readCsvRows(bodyOf('number\n\n# only a header\n'))).toEqual({ header: true, rows: [] });
  });

  it('answers malformed CSV (a quoted field never closed) with 400 bad_request', async () => {
    for (const csv of ['number\n+15552220001,"never closed\n+15552220002\n', 'number\n"+15552220001\n']) {
      const err = await appErrorOf(readCsvRows(bodyOf(csv)));
      expect(err).toEqual({ status: 400, code: 'bad_request', message: 'malformed CSV: a quoted field is never closed' });
    }
  });

  it('keeps stray quotes inside unquoted fields as data, and reads doubled quotes in quoted fields', async () => {
    const result = await readCsvRows(bodyOf('number\n+15552220001,he said "stop"\n"+15552220002"junk,x\n+15552220003,"a ""quoted"" word"\n'));
    expect(result.rows).toEqual([
      { line: 2, cells: ['+15552220001', 'he said "stop"'] },
      { line: 3, cells: ['"+15552220002"junk', 'x'] },
      { line: 4, cells: ['+15552220003', 'a "quoted" word'] },
    ]);
  });

  it('counts bytes while streaming: 413 at the first byte over the limit, not before', async () => {
    const line = '+15552220001,reason\n'; // 20 bytes
    const exact = await readCsvRows(bodyOf(line, line, line), { maxBytes: 60 });
    expect(exact.rows).toHaveLength(3);
    const over = await appErrorOf(readCsvRows(bodyOf(line, line, line, '\n'), { maxBytes: 60 }));
    expect(over).toEqual({ status: 413, code: 'payload_too_large', message: expect.any(String) });
  });

  it('stops reading once over the byte limit', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new TextEncoder().encode('+15552220001\n'.repeat(100)));
      },
    });
    const err = await appErrorOf(readCsvRows(endless, { maxBytes: 10_000 }));
    expect(err.status).toBe(413);
    expect(pulled).toBeLessThan(20);
  });

  it('allows exactly maxDataRows data rows (header, blanks and comments not counted) and refuses one more with 422', async () => {
    const five = 'number\n# c\n' + Array.from({ length: 5 }, (_, i) => `+1555222000${i}\n\n`).join('');
    expect((await readCsvRows(bodyOf(five), { maxDataRows: 5 })).rows).toHaveLength(5);
    const err = await appErrorOf(readCsvRows(bodyOf(five + '+15552229999\n'), { maxDataRows: 5 }));
    expect(err).toEqual({ status: 422, code: 'unprocessable', message: expect.stringContaining('more than 5 data rows') });
  });

  it('has the SPEC limits by default: 10000 rows', async () => {
    const csv = Array.from({ length: 10_001 }, () => '5552220001').join('\n');
    expect((await appErrorOf(readCsvRows(bodyOf(csv)))).status).toBe(422);
    expect((await readCsvRows(bodyOf(csv.slice(0, csv.lastIndexOf('\n'))))).rows).toHaveLength(10_000);
  });
});

describe('request checks', () => {
  it('accepts text/csv without a charset or in UTF-8 / ASCII, refuses other charsets and compression with 415', () => {
    for (const type of [undefined, 'text/csv', 'text/csv; charset=utf-8', 'text/csv;charset="UTF-8"', 'text/csv; charset=us-ascii']) {
      expect(() => assertCsvRequest(type, undefined)).not.toThrow();
    }
    expect(() => assertCsvRequest('text/csv', 'identity')).not.toThrow();
    for (const [type, encoding] of [
      ['text/csv; charset=latin1', undefined],
      ['text/csv; charset=utf-16', undefined],
      ['text/csv', 'gzip'],
      ['application/json', undefined],
      ['text/plain; charset=utf-8', undefined],
    ] as const) {
      expect(() => assertCsvRequest(type, encoding)).toThrow(expect.objectContaining({ status: 415, code: 'unsupported_media_type' }));
    }
  });

  it('refuses a declared length over the limit', () => {
    expect(() => assertDeclaredLength('1000000')).not.toThrow();
    expect(() => assertDeclaredLength(undefined)).not.toThrow();
    expect(() => assertDeclaredLength('1000001')).toThrow(expect.objectContaining({ status: 413, code: 'payload_too_large' }));
  });
});

describe('helpers', () => {
  it('counts CRLF, LF and lone CR once each', () => {
    expect(countLineBreaks('a\r\nb\nc\rd')).toBe(3);
    expect(countLineBreaks('\r\r\n\n')).toBe(3);
    expect(countLineBreaks('abc')).toBe(0);
  });

  it('masks a cell to its last 4 characters', () => {
    expect(maskCell('+15552220001')).toBe('***0001');
    expect(maskCell('  555-222-0001 ')).toBe('***0001');
    expect(maskCell('12')).toBe('***12');
    expect(maskCell('')).toBe('');
    expect(maskCell('tel:☎☎☎☎')).toBe('***☎☎☎☎');
  });

  it('lists at most the cap of rejections but counts them all', () => {
    const r = new Rejections<'x'>(2);
    r.add(1, 'aaaa1', 'x');
    r.add(2, 'aaaa2', 'x');
    r.add(3, 'aaaa3', 'x');
    expect(r.count).toBe(3);
    expect(r.listed).toEqual([
      { line: 1, value: '***aaa1', reason: 'x' },
      { line: 2, value: '***aaa2', reason: 'x' },
    ]);
  });
});

describe('cleanReason', () => {
  it('trims, collapses whitespace and control characters, and makes empty null', () => {
    expect(cleanReason(undefined)).toEqual({ reason: null, truncated: false });
    expect(cleanReason('   ')).toEqual({ reason: null, truncated: false });
    expect(cleanReason(' asked\r\nto\tstop \u0000 now ')).toEqual({ reason: 'asked to stop now', truncated: false });
  });

  it('keeps 200 characters and cuts longer reasons to 200 characters (code points)', () => {
    expect(cleanReason('a'.repeat(200))).toEqual({ reason: 'a'.repeat(200), truncated: false });
    expect(cleanReason('a'.repeat(201))).toEqual({ reason: 'a'.repeat(200), truncated: true });
    const emoji = '😀'.repeat(250);
    const cut = cleanReason(emoji);
    expect(cut.truncated).toBe(true);
    expect(Array.from(cut.reason!)).toHaveLength(200);
    expect(cut.reason).toBe('😀'.repeat(200));
  });
});

describe('planSuppressionImport', () => {
  it('normalizes numbers, rejects non-E.164 and in-file duplicates, and keeps the first reason', () => {
    const plan = planSuppressionImport(
      rows(
        [2, '+15552220001', 'first'],
        [3, '5552220002'],
        [4, '15552220003', ' spaced  reason '],
        [5, '555-222-0004'],
        [6, '(555) 222-0005'],
        [7, '+1555222000'],
        [8, '1555222000'],
        [9, '5551220001'],
        [10, '+15552220001', 'second'],
        [11, '15552220002'],
        [12, '', 'no number'],
        [13, '+442071838750'],
        [14, '+44207183875000000'],
      ),
    );
    expect(plan.received).toBe(13);
    expect(plan.accepted).toEqual([
      { phone: '+15552220001', reason: 'first' },
      { phone: '+15552220002', reason: null },
      { phone: '+15552220003', reason: 'spaced reason' },
      { phone: '+442071838750', reason: null },
    ]);
    expect(plan.rejected_count).toBe(9);
    expect(plan.rejected).toEqual([
      { line: 5, value: '***0004', reason: 'not_e164' },
      { line: 6, value: '***0005', reason: 'not_e164' },
      { line: 7, value: '***2000', reason: 'not_e164' },
      { line: 8, value: '***2000', reason: 'not_e164' },
      { line: 9, value: '***0001', reason: 'not_e164' },
      { line: 10, value: '***0001', reason: 'duplicate' },
      { line: 11, value: '***0002', reason: 'duplicate' },
      { line: 12, value: '', reason: 'not_e164' },
      { line: 14, value: '***0000', reason: 'not_e164' },
    ]);
    expect(plan.reasons_truncated).toBe(0);
  });

  it('lists 100 rejections at most while counting all', () => {
    const bad = Array.from({ length: 150 }, (_, i): [number, string] => [i + 1, `bad${i}`]);
    const plan = planSuppressionImport(rows(...bad, [151, '+15552220001']));
    expect(plan.rejected_count).toBe(150);
    expect(plan.rejected).toHaveLength(100);
    expect(plan.rejected[99]).toEqual({ line: 100, value: '***ad99', reason: 'not_e164' });
    expect(plan.accepted).toHaveLength(1);
  });

  it('counts cut reasons of accepted rows only', () => {
    const long = 'r'.repeat(250);
    const plan = planSuppressionImport(rows([1, '+15552220001', long], [2, '+15552220001', long], [3, 'bad', long], [4, '+15552220002', 'short']));
    expect(plan.reasons_truncated).toBe(1);
    expect(plan.accepted[0]!.reason).toBe('r'.repeat(200));
  });
});

describe('reassigned numbers planning', () => {
  const today = '2026-11-22';

  it('parses past and present calendar dates only', () => {
    expect(parseDisconnectionDate('2024-02-29', today)).toBe('2024-02-29');
    expect(parseDisconnectionDate(' 2026-11-22 ', today)).toBe('2026-11-22');
    expect(parseDisconnectionDate('1900-01-01', today)).toBe('1900-01-01');
    for (const bad of [undefined, '', '2026-11-23', '2030-01-01', '2023-02-29', '2026-13-01', '2026-00-10', '2026-1-5', '11/22/2026', '2026-11-22T00:00:00Z', '1899-12-31', '0000-01-01']) {
      expect({ bad, parsed: parseDisconnectionDate(bad, today) }).toEqual({ bad, parsed: null });
    }
  });

  it('takes today in UTC', () => {
    expect(utcToday(new Date('2026-11-22T23:30:00-08:00'))).toBe('2026-11-23');
  });

  it('rejects not_e164 first, then bad_date, then duplicate (same number and date)', () => {
    const plan = planReassignedImport(
      rows(
        [2, '+15552220001', '2025-01-10'],
        [3, '5552220001', '2025-01-10'],
        [4, '5552220001', '2025-06-01'],
        [5, 'nope', 'also bad'],
        [6, '+15552220002'],
        [7, '+15552220003', '2027-01-01'],
        [8, '15552220004', '2025-03-04', 'ignored'],
      ),
      today,
    );
    expect(plan.received).toBe(7);
    expect(plan.accepted).toEqual([
      { phone: '+15552220001', disconnectedOn: '2025-01-10' },
      { phone: '+15552220001', disconnectedOn: '2025-06-01' },
      { phone: '+15552220004', disconnectedOn: '2025-03-04' },
    ]);
    expect(plan.rejected_count).toBe(4);
    expect(plan.rejected).toEqual([
      { line: 3, value: '***0001', reason: 'duplicate' },
      { line: 5, value: '***nope', reason: 'not_e164' },
      { line: 6, value: '***0002', reason: 'bad_date' },
      { line: 7, value: '***0003', reason: 'bad_date' },
    ]);
  });
});
