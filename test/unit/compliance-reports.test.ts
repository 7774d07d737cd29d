import JSZip from 'jszip';
import { acceptsOver, csvField, csvLine } from '../../src/modules/compliance-reports/artifact';
import { canonicalJson } from '../../src/lib/canonical-json';
import { resolveWindow } from '../../src/modules/compliance-reports/report-window';
import { buildZip } from '../../src/lib/zip';

describe('canonicalJson (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units at every depth and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}');
    // RFC 8785 section 3.2.3: UTF-16 code-unit order, not code-point order.
    expect(canonicalJson({ '\u{1F600}': 1, '\uFB33': 2, a: 3 })).toBe('{"a":3,"\u{1F600}":1,"\uFB33":2}');
  });

  it('serializes numbers and strings as ECMAScript does (RFC 8785 test values)', () => {
    expect(canonicalJson([1e21, 1e-7, -0, 0.000001, 333333333.3333333, 4.5])).toBe('[1e+21,1e-7,0,0.000001,333333333.3333333,4.5]');
    expect(canonicalJson('\u20ac$\u000f\nA\'B"\\\\"/')).toBe('"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"');
  });

  it('drops undefined members like JSON, uses toJSON, and refuses what JSON cannot carry', () => {
    expect(canonicalJson({ a: undefined, b: new Date('2026-01-02T03:04:05.006Z') })).toBe('{"b":"2026-01-02T03:04:05.006Z"}');
    expect(() => canonicalJson(Number.NaN)).toThrow();
    expect(() => canonicalJson({ n: 1n })).toThrow();
  });

  it('round-trips through JSON.parse to the same bytes', () => {
    const value = { z: [{ b: 'é', a: 1.5 }], a: { nested: { k: null } } };
    const text = canonicalJson(value);
    expect(canonicalJson(JSON.parse(text))).toBe(text);
  });
});

describe('buildZip', () => {
  it('writes an archive any reader opens, with the exact bytes and UTF-8 names', async () => {
    const at = new Date('2026-10-19T16:00:00Z');
    const files = [
      { name: 'a.json', data: Buffer.from('{"a":1}') },
      { name: 'README.txt', data: Buffer.from('héllo\n'.repeat(1000)) },
      { name: 'empty.txt', data: Buffer.alloc(0) },
    ];
    const zip = await buildZip(files, at);
    const read = await JSZip.loadAsync(zip);
    expect(Object.keys(read.files).sort()).toEqual(['README.txt', 'a.json', 'empty.txt']);
    for (const f of files) expect(Buffer.from(await read.file(f.name)!.async('uint8array')).equals(f.data)).toBe(true);
    // Deterministic: the same entries and date give the same bytes.
    expect((await buildZip(files, at)).equals(zip)).toBe(true);
    expect((await buildZip(files, new Date('2026-10-19T16:00:02Z'))).equals(zip)).toBe(false);
  });
});

describe('resolveWindow', () => {
  const now = new Date('2026-10-19T16:00:00Z');

  it('defaults to the trailing 30 UTC dates ending today', () => {
    const w = resolveWindow({}, now);
    expect(w.to.toISOString()).toBe('2026-10-19T16:00:00.000Z');
    expect(w.from.toISOString()).toBe('2026-09-20T00:00:00.000Z');
    expect(w.days).toHaveLength(30);
    expect(w.days[0]).toBe('2026-09-20');
    expect(w.days[29]).toBe('2026-10-19');
  });

  it('treats to as exclusive: a window ending at midnight does not cover that date', () => {
    const w = resolveWindow({ from: '2026-10-01T12:00:00Z', to: '2026-10-03T00:00:00Z' }, now);
    expect(w.days).toEqual(['2026-10-01', '2026-10-02']);
    expect(resolveWindow({ to: '2026-10-03T00:00:00Z' }, now).days).toHaveLength(30);
    expect(resolveWindow({ to: '2026-10-03T00:00:00Z' }, now).days[29]).toBe('2026-10-02');
  });

  it('reads offsets as instants (UTC dates)', () => {
    const w = resolveWindow({ from: '2026-10-01T23:30:00-05:00', to: '2026-10-02T08:00:00+02:00' }, now);
    expect(w.days).toEqual(['2026-10-02']);
  });

  it('gives no dates for an empty window and refuses from after to, or a window over 366 dates', () => {
    expect(resolveWindow({ from: '2026-10-01T12:00:00Z', to: '2026-10-01T12:00:00Z' }, now).days).toEqual([]);
    expect(() => resolveWindow({ from: '2026-10-02T00:00:00Z', to: '2026-10-01T00:00:00Z' }, now)).toThrow(/must not be after/);
    expect(() => resolveWindow({ from: '2026-11-01T00:00:00Z' }, now)).toThrow(/must not be after/);
    expect(resolveWindow({ from: '2025-10-19T00:00:00Z', to: '2026-10-20T00:00:00Z' }, now).days).toHaveLength(366);
    expect(() => resolveWindow({ from: '2025-10-18T00:00:00Z', to: '2026-10-20T00:00:00Z' }, now)).toThrow(/at most 366/);
  });
});

describe('CSV and content negotiation', () => {
  it('quotes RFC 4180 specials and neutralizes formula prefixes in text only', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(csvField('+1')).toBe("'+1");
    expect(csvField(-3)).toBe('-3');
    expect(csvField(null)).toBe('');
    expect(csvLine(['a', 1, null])).toBe('a,1,\r\n');
  });

  it('picks the alternative media type only when the client prefers it to JSON', () => {
    expect(acceptsOver(undefined, 'text/csv')).toBe(false);
    expect(acceptsOver('text/csv', 'text/csv')).toBe(true);
    expect(acceptsOver('Text/CSV; charset=utf-8', 'text/csv')).toBe(true);
    expect(acceptsOver('application/json, text/csv;q=0.5', 'text/csv')).toBe(false);
    expect(acceptsOver('text/csv;q=0', 'text/csv')).toBe(false);
    expect(acceptsOver('*/*', 'text/csv')).toBe(false);
    expect(acceptsOver('application/zip, application/json;q=0.9', 'application/zip')).toBe(true);
  });
});
