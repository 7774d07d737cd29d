import http from 'node:http';
import { withTenant } from '../../src/lib/tenancy';
import { suppressionRoutes } from '../../src/modules/suppressions/suppression.routes';
import { ADMIN_TOKEN, createUserSession, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { chunkedCsvUpload } from '../helpers/uploads';
import { widgetRouter } from '../helpers/widget';

const RESULT_KEYS = ['received', 'accepted', 'recorded', 'rejected_count', 'rejected', 'reasons_truncated'].sort();

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

/** Distinct valid NANP numbers: +1212 200 0000 + i. */
const nanp = (i: number, area = '212') => `+1${area}${2_000_000 + i}`;

describe('POST /v1/suppressions/import', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;

  const importCsv = (token: string, csv: string | Buffer, headers: Record<string, string> = { 'content-type': 'text/csv' }) =>
    app.request('POST', '/v1/suppressions/import', { token, rawBody: csv, headers });
  const entries = (tenantId: string) =>
    withTenant(app.deps.db, tenantId, (tx) => tx.dncEntry.findMany({ orderBy: [{ createdAt: 'asc' }, { phoneE164: 'asc' }] }));
  const audits = (tenantId: string) =>
    withTenant(app.deps.db, tenantId, (tx) => tx.auditLog.findMany({ where: { action: 'suppressions.imported' }, orderBy: [{ occurredAt: 'asc' }, { lane: 'asc' }, { seq: 'asc' }] }));

  beforeAll(async () => {
    app = await startTestApp();
    tenant = await provisionTenant(app);
  });
  afterAll(async () => {
    await app.close();
  });

  it('imports numbers: 200 summary, stored rows with source suppression_import, one audit entry', async () => {
    const t = await provisionTenant(app);
    const csv = [
      'Number,Reason', // header (any case)
      '# exported 2026-11-20',
      '+12122000001,asked to stop',
      '',
      '2122000002',
      '12122000003,"cease, in writing"',
      '   ',
      '+12122000001,again',
      'not-a-number,x',
    ].join('\n');
    const res = await importCsv(t.apiKey, csv);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(RESULT_KEYS);
    expect(res.body).toEqual({
      received: 5,
      accepted: 3,
      recorded: 3,
      rejected_count: 2,
      rejected: [
        { line: 8, value: '***0001', reason: 'duplicate' },
        { line: 9, value: '***mber', reason: 'not_e164' },
      ],
      reasons_truncated: 0,
    });

    const stored = await entries(t.tenantId);
    expect(stored.map((e) => [e.phoneE164, e.source, e.reason, e.removedAt]).sort()).toEqual([
      ['+12122000001', 'suppression_import', 'asked to stop', null],
      ['+12122000002', 'suppression_import', null, null],
      ['+12122000003', 'suppression_import', 'cease, in writing', null],
    ]);

    const audit = await audits(t.tenantId);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorType: 'api_key', action: 'suppressions.imported' });
    expect(audit[0]!.payload).toEqual({
      source: 'suppression_import',
      header: true,
      received: 5,
      accepted: 3,
      recorded: 3,
      rejected_count: 2,
      reasons_truncated: 0,
    });
  });

  it('is idempotent: a re-upload records 0, keeps the stored reasons and still writes its audit entry', async () => {
    const t = await provisionTenant(app);
    const csv = `${nanp(10)},first reason\n${nanp(11)}\n`;
    const first = await importCsv(t.apiKey, csv);
    expect(first.body).toMatchObject({ received: 2, accepted: 2, recorded: 2, rejected_count: 0 });
    const again = await importCsv(t.apiKey, `${nanp(10)},another reason\n${nanp(11)}\n${nanp(12)}\n`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ received: 3, accepted: 3, recorded: 1, rejected_count: 0, rejected: [], reasons_truncated: 0 });
    const third = await importCsv(t.apiKey, csv);
    expect(third.body.recorded).toBe(0);
    const stored = await entries(t.tenantId);
    expect(stored).toHaveLength(3);
    expect(stored.find((e) => e.phoneE164 === nanp(10))!.reason).toBe('first reason');
    expect((await audits(t.tenantId)).map((a) => (a.payload as { recorded: number }).recorded)).toEqual([2, 1, 0]);
  });

  it('lists a number again when its earlier entry was removed, and alongside other sources', async () => {
    const t = await provisionTenant(app);
    await withTenant(app.deps.db, t.tenantId, async (tx) => {
      await tx.dncEntry.create({ data: { tenantId: t.tenantId, phoneE164: nanp(20), source: 'suppression_import', removedAt: new Date(), removedSource: 'api' } });
      await tx.dncEntry.create({ data: { tenantId: t.tenantId, phoneE164: nanp(21), source: 'optout_keyword' } });
    });
    const res = await importCsv(t.apiKey, `${nanp(20)}\n${nanp(21)}\n`);
    expect(res.body.recorded).toBe(2);
    const active = (await entries(t.tenantId)).filter((e) => e.removedAt === null);
    expect(active.map((e) => `${e.phoneE164} ${e.source}`).sort()).toEqual(
      [`${nanp(20)} suppression_import`, `${nanp(21)} optout_keyword`, `${nanp(21)} suppression_import`].sort(),
    );
  });

  it('treats the first row as data when its first cell is not a header name', async () => {
    const t = await provisionTenant(app);
    const res = await importCsv(t.apiKey, `name,phone\n${nanp(30)}\n`);
    expect(res.body).toMatchObject({ received: 2, accepted: 1, recorded: 1, rejected_count: 1, rejected: [{ line: 1, value: '***name', reason: 'not_e164' }] });
    for (const header of ['phone', 'PHONE_NUMBER', 'telephone', 'e164', 'MSISDN', 'number']) {
      const r = await importCsv(t.apiKey, `${header}\n${nanp(30)}\n`);
      expect({ header, received: r.body.received, rejected: r.body.rejected_count }).toEqual({ header, received: 1, rejected: 0 });
    }
  });

  it('numbers rejected rows by file line across CRLF, comments, blank lines and quoted line breaks', async () => {
    const t = await provisionTenant(app);
    const csv = ['phone', '#c', '', `${nanp(40)},"multi`, 'line reason"', 'bad-1', '', '#x', 'bad-2'].join('\r\n');
    const res = await importCsv(t.apiKey, csv);
    expect(res.body.rejected).toEqual([
      { line: 6, value: '***ad-1', reason: 'not_e164' },
      { line: 9, value: '***ad-2', reason: 'not_e164' },
    ]);
    expect((await entries(t.tenantId))[0]!.reason).toBe('multi line reason');
  });

  it('masks rejected values: the response never repeats a whole number', async () => {
    const t = await provisionTenant(app);
    const full = ['+1212200005', '212-200-0051', '+12122000052', '(212) 200-0053'];
    const res = await importCsv(t.apiKey, `${full.join('\n')}\n+12122000052\n`);
    expect(res.body.rejected.map((r: { value: string }) => r.value)).toEqual(['***0005', '***0051', '***0053', '***0052']);
    expect(res.body.rejected.map((r: { reason: string }) => r.reason)).toEqual(['not_e164', 'not_e164', 'not_e164', 'duplicate']);
    for (const number of full) expect(res.text).not.toContain(number);
    expect(res.text).not.toContain('2122000052');
  });

  it('lists at most 100 rejected rows; rejected_count is the true total', async () => {
    const t = await provisionTenant(app);
    const bad = Array.from({ length: 250 }, (_, i) => `x${String(i).padStart(4, '0')}`);
    const res = await importCsv(t.apiKey, `number\n${bad.join('\n')}\n${nanp(60)}\n`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 251, accepted: 1, recorded: 1, rejected_count: 250 });
    expect(res.body.rejected).toHaveLength(100);
    expect(res.body.rejected[0]).toEqual({ line: 2, value: '***0000', reason: 'not_e164' });
    expect(res.body.rejected[99]).toEqual({ line: 101, value: '***0099', reason: 'not_e164' });
  });

  it('cuts reasons longer than 200 characters to 200 and says how many', async () => {
    const t = await provisionTenant(app);
    const long = 'é'.repeat(150) + 'x'.repeat(100); // 250 characters, 400 bytes
    const res = await importCsv(t.apiKey, `${nanp(70)},${long}\n${nanp(71)},${'y'.repeat(200)}\n${nanp(72)},"${'z'.repeat(201)}"\n`);
    expect(res.body).toMatchObject({ accepted: 3, recorded: 3, reasons_truncated: 2 });
    const byPhone = new Map((await entries(t.tenantId)).map((e) => [e.phoneE164, e.reason]));
    expect(byPhone.get(nanp(70))).toBe('é'.repeat(150) + 'x'.repeat(50));
    expect(byPhone.get(nanp(71))).toBe('y'.repeat(200));
    expect(byPhone.get(nanp(72))).toBe('z'.repeat(200));
  });

  it('answers an empty file or a header-only file with zeros', async () => {
    const t = await provisionTenant(app);
    for (const csv of ['', 'number\n', '# nothing\n\n']) {
      const res = await importCsv(t.apiKey, csv);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: 0, accepted: 0, recorded: 0, rejected_count: 0, rejected: [], reasons_truncated: 0 });
    }
  });

  it('accepts exactly 1,000,000 bytes and exactly 10,000 data rows', async () => {
    const t = await provisionTenant(app);
    // 10,000 rows of exactly 100 bytes: 12-byte number, comma, 86-byte reason, newline.
    const lines = Array.from({ length: 10_000 }, (_, i) => `${nanp(i, '213')},${'r'.repeat(86)}\n`);
    const csv = lines.join('');
    expect(Buffer.byteLength(csv)).toBe(1_000_000);
    const res = await importCsv(t.apiKey, csv);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 10_000, accepted: 10_000, recorded: 10_000, rejected_count: 0 });
    expect(await withTenant(app.deps.db, t.tenantId, (tx) => tx.dncEntry.count())).toBe(10_000);
  });

  it('refuses a declared body over 1,000,000 bytes with 413 and stores nothing', async () => {
    const t = await provisionTenant(app);
    const csv = `${nanp(80)},${'r'.repeat(999_988)}`;
    expect(Buffer.byteLength(csv)).toBe(1_000_001);
    const res = await importCsv(t.apiKey, csv);
    expectError(res, 413, 'payload_too_large');
    expect(await entries(t.tenantId)).toEqual([]);
    expect(await audits(t.tenantId)).toEqual([]);
  });

  it('answers a declared length over the limit before reading the body', async () => {
    // Declares 2 MB but sends only a few bytes and never ends: a server that read the body would wait forever.
    const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: app.port,
          method: 'POST',
          path: '/v1/suppressions/import',
          agent: false,
          headers: { 'content-type': 'text/csv', authorization: `Bearer ${tenant.apiKey}`, 'content-length': '2000000' },
        },
        (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => {
            resolve({ status: r.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
      // A server that waits for the rest never answers: fail (and free the connection) instead of hanging.
      req.setTimeout(10_000, () => req.destroy(new Error('no answer: the server waited for the declared body')));
      req.write(`${nanp(81)}\n`);
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  it('counts a chunked body (no content-length) while streaming: 413 past 1,000,000 bytes, nothing stored', async () => {
    const t = await provisionTenant(app);
    // Few rows (so the row limit is not what stops it), 10,000 bytes each, 3 MB in all.
    const chunk = `${nanp(90)},${'r'.repeat(9_986)}\n`;
    expect(Buffer.byteLength(chunk)).toBe(10_000);
    const res = await chunkedCsvUpload(app.port, '/v1/suppressions/import', t.apiKey, chunk, 300);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    expect(await entries(t.tenantId)).toEqual([]);
  });

  it('accepts a small chunked body', async () => {
    const t = await provisionTenant(app);
    const res = await chunkedCsvUpload(app.port, '/v1/suppressions/import', t.apiKey, `${nanp(91)}\n`, 1);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 1, recorded: 1 });
  });

  it('refuses more than 10,000 data rows with 422 and stores nothing', async () => {
    const t = await provisionTenant(app);
    const csv = 'number\n' + Array.from({ length: 10_001 }, (_, i) => nanp(i, '214')).join('\n');
    const res = await importCsv(t.apiKey, csv);
    expectError(res, 422, 'unprocessable');
    expect(await entries(t.tenantId)).toEqual([]);
    expect(await audits(t.tenantId)).toEqual([]);
  });

  it('refuses malformed CSV with 400 and stores nothing', async () => {
    const t = await provisionTenant(app);
    for (const csv of [`${nanp(100)},ok\n${nanp(101)},"unterminated\n${nanp(102)}\n`, `${nanp(100)}\n"${nanp(101)}\n`]) {
      const res = await importCsv(t.apiKey, csv);
      expectError(res, 400, 'bad_request');
      expect(res.body.error.message).toMatch(/malformed CSV/);
    }
    expect(await entries(t.tenantId)).toEqual([]);
    // A stray quote inside an unquoted field is data, not a malformed file: that row alone is judged.
    const stray = await importCsv(t.apiKey, `${nanp(103)},he said "stop"\n"${nanp(104)}"junk\n`);
    expect(stray.status).toBe(200);
    expect(stray.body).toMatchObject({ received: 2, recorded: 1, rejected: [{ line: 2, value: '***junk', reason: 'not_e164' }] });
    expect((await entries(t.tenantId)).map((e) => e.reason)).toEqual(['he said "stop"']);
  });

  it('refuses other media types, charsets and compressed bodies with 415', async () => {
    const cases: Record<string, string>[] = [
      { 'content-type': 'application/json' },
      { 'content-type': 'text/plain' },
      { 'content-type': 'multipart/form-data; boundary=x' },
      { 'content-type': 'text/csv; charset=iso-8859-1' },
      { 'content-type': 'text/csv', 'content-encoding': 'gzip' },
    ];
    for (const headers of cases) {
      const res = await importCsv(tenant.apiKey, `${nanp(110)}\n`, headers);
      expect({ headers, status: res.status, code: res.body?.error?.code }).toEqual({ headers, status: 415, code: 'unsupported_media_type' });
    }
    const noType = await app.request('POST', '/v1/suppressions/import', { token: tenant.apiKey, rawBody: `${nanp(110)}\n` });
    expectError(noType, 415, 'unsupported_media_type');
    // An empty body escapes the global check (nothing to type), not the route's.
    expectError(await importCsv(tenant.apiKey, '', { 'content-type': 'application/json' }), 415, 'unsupported_media_type');
    const withCharset = await importCsv(tenant.apiKey, `${nanp(111)}\n`, { 'content-type': 'text/csv; charset=utf-8' });
    expect(withCharset.status).toBe(200);
  });

  it('needs a credential (401) and an active tenant (403)', async () => {
    const none = await importCsv('', `${nanp(120)}\n`);
    expectError(none, 401, 'unauthorized');
    const bad = await importCsv('dd_not-a-real-key', `${nanp(120)}\n`);
    expectError(bad, 401, 'unauthorized');

    const t = await provisionTenant(app);
    const suspend = await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN });
    expect(suspend.status).toBe(200);
    expectError(await importCsv(t.apiKey, `${nanp(120)}\n`), 403, 'forbidden');
    expect(await entries(t.tenantId)).toEqual([]);
  });

  it('is open to a dashboard session (audited as the user)', async () => {
    const t = await provisionTenant(app);
    const session = await createUserSession(app, t);
    const res = await importCsv(session.token, `${nanp(130)}\n`);
    expect(res.status).toBe(200);
    expect(res.body.recorded).toBe(1);
    expect((await audits(t.tenantId))[0]).toMatchObject({ actorType: 'user', actorId: session.userId });
  });

  it('refuses a widget token with 403 (management scope)', async () => {
    const router = widgetRouter(tenant, suppressionRoutes(app.deps));
    const res = await router.request('/v1/suppressions/import', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: `${nanp(140)}\n` });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    expect((await entries(tenant.tenantId)).some((e) => e.phoneE164 === nanp(140))).toBe(false);
  });

  it('keeps tenants apart: the same numbers are recorded for each tenant separately', async () => {
    const a = await provisionTenant(app);
    const b = await provisionTenant(app);
    const csv = `${nanp(150)}\n${nanp(151)}\n`;
    expect((await importCsv(a.apiKey, csv)).body.recorded).toBe(2);
    expect((await importCsv(b.apiKey, csv)).body.recorded).toBe(2);
    expect((await importCsv(a.apiKey, `${nanp(152)}\n`)).body.recorded).toBe(1);
    expect((await entries(a.tenantId)).map((e) => e.phoneE164).sort()).toEqual([nanp(150), nanp(151), nanp(152)]);
    expect((await entries(b.tenantId)).map((e) => e.phoneE164).sort()).toEqual([nanp(150), nanp(151)]);
    expect((await entries(b.tenantId)).every((e) => e.tenantId === b.tenantId)).toBe(true);
  });
});
