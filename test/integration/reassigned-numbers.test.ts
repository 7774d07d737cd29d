import { withTenant } from '../../src/lib/tenancy';
import { reassignedNumberRoutes } from '../../src/modules/reassigned-numbers/reassigned-number.routes';
import { utcToday } from '../../src/modules/reassigned-numbers/reassigned-number.rules';
import { ADMIN_TOKEN, createUserSession, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { chunkedCsvUpload } from '../helpers/uploads';
import { widgetRouter } from '../helpers/widget';

const RESULT_KEYS = ['received', 'accepted', 'recorded', 'rejected_count', 'rejected'].sort();
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

const nanp = (i: number, area = '312') => `+1${area}${2_000_000 + i}`;
const daysFromToday = (days: number) => utcToday(new Date(Date.now() + days * 86_400_000));

describe('reassigned numbers', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;

  const importCsv = (token: string, csv: string, headers: Record<string, string> = { 'content-type': 'text/csv' }) =>
    app.request('POST', '/v1/reassigned-numbers/import', { token, rawBody: csv, headers });
  const lookup = (token: string, phone: string) => app.request('GET', `/v1/reassigned-numbers?phone=${encodeURIComponent(phone)}`, { token });
  const stored = (tenantId: string) =>
    withTenant(app.deps.db, tenantId, (tx) => tx.reassignedNumber.findMany({ orderBy: [{ phoneE164: 'asc' }, { disconnectedOn: 'asc' }] }));
  const audits = (tenantId: string) =>
    withTenant(app.deps.db, tenantId, (tx) => tx.auditLog.findMany({ where: { action: 'reassigned_numbers.imported' }, orderBy: [{ occurredAt: 'asc' }, { lane: 'asc' }, { seq: 'asc' }] }));

  beforeAll(async () => {
    app = await startTestApp();
    tenant = await provisionTenant(app);
  });
  afterAll(async () => {
    await app.close();
  });

  describe('POST /v1/reassigned-numbers/import', () => {
    it('stores (number, date) pairs: 200 summary, rejected rows with reasons, one audit entry', async () => {
      const t = await provisionTenant(app);
      const today = utcToday();
      const csv = [
        'phone_number,disconnected_on',
        '# RND results',
        `${nanp(1)},2025-01-10`,
        '',
        `3122000001,2025-06-01`, // same number, another disconnection: kept
        `13122000001,2025-06-01`, // same pair again
        `${nanp(2)},${today}`, // today is fine
        `${nanp(3)},${daysFromToday(2)}`, // future
        `${nanp(4)},2025-02-30`, // not a calendar date
        `${nanp(5)},06/01/2025`, // wrong format
        `${nanp(6)}`, // no date
        'not-a-number,2025-01-01',
      ].join('\n');
      const res = await importCsv(t.apiKey, csv);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(RESULT_KEYS);
      expect(res.body).toEqual({
        received: 9,
        accepted: 3,
        recorded: 3,
        rejected_count: 6,
        rejected: [
          { line: 6, value: '***0001', reason: 'duplicate' },
          { line: 8, value: '***0003', reason: 'bad_date' },
          { line: 9, value: '***0004', reason: 'bad_date' },
          { line: 10, value: '***0005', reason: 'bad_date' },
          { line: 11, value: '***0006', reason: 'bad_date' },
          { line: 12, value: '***mber', reason: 'not_e164' },
        ],
      });
      for (const full of [nanp(3), nanp(4), '3122000003']) expect(res.text).not.toContain(full);

      const rows = await stored(t.tenantId);
      expect(rows.map((r) => [r.phoneE164, r.disconnectedOn.toISOString().slice(0, 10), r.source])).toEqual([
        [nanp(1), '2025-01-10', 'import'],
        [nanp(1), '2025-06-01', 'import'],
        [nanp(2), today, 'import'],
      ]);
      const audit = await audits(t.tenantId);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ actorType: 'api_key', action: 'reassigned_numbers.imported' });
      expect(audit[0]!.payload).toEqual({ header: true, received: 9, accepted: 3, recorded: 3, rejected_count: 6 });
    });

    it('is idempotent: a re-upload records 0', async () => {
      const t = await provisionTenant(app);
      const csv = `number,disconnect_date\n${nanp(10)},2024-03-01\n${nanp(11)},2024-04-01\n`;
      expect((await importCsv(t.apiKey, csv)).body.recorded).toBe(2);
      const again = await importCsv(t.apiKey, csv);
      expect(again.body).toEqual({ received: 2, accepted: 2, recorded: 0, rejected_count: 0, rejected: [] });
      expect(await stored(t.tenantId)).toHaveLength(2);
      expect(await audits(t.tenantId)).toHaveLength(2);
    });

    it('detects the header by its first cell only', async () => {
      const t = await provisionTenant(app);
      const res = await importCsv(t.apiKey, `date,number\n${nanp(20)},2024-01-01\n`);
      expect(res.body).toMatchObject({ received: 2, recorded: 1, rejected: [{ line: 1, value: '***date', reason: 'not_e164' }] });
      for (const header of ['NUMBER', 'Phone', 'telephone', 'e164', 'msisdn']) {
        const r = await importCsv(t.apiKey, `${header},disconnected_on\n${nanp(20)},2024-01-01\n`);
        expect({ header, received: r.body.received }).toEqual({ header, received: 1 });
      }
    });

    it('lists at most 100 rejected rows; rejected_count is the true total', async () => {
      const t = await provisionTenant(app);
      const bad = Array.from({ length: 120 }, (_, i) => `${nanp(100 + i)},someday`);
      const res = await importCsv(t.apiKey, bad.join('\n'));
      expect(res.body).toMatchObject({ received: 120, accepted: 0, recorded: 0, rejected_count: 120 });
      expect(res.body.rejected).toHaveLength(100);
      expect(res.body.rejected[99]).toEqual({ line: 100, value: '***0199', reason: 'bad_date' });
    });

    it('refuses more than 10,000 data rows with 422, a body over 1,000,000 bytes with 413, malformed CSV with 400; nothing stored', async () => {
      const t = await provisionTenant(app);
      const many = Array.from({ length: 10_001 }, (_, i) => `${nanp(i, '313')},2024-01-01`).join('\n');
      expectError(await importCsv(t.apiKey, many), 422, 'unprocessable');
      const big = `${nanp(1)},2024-01-01,${'x'.repeat(1_000_000)}`;
      expectError(await importCsv(t.apiKey, big), 413, 'payload_too_large');
      const chunked = await chunkedCsvUpload(app.port, '/v1/reassigned-numbers/import', t.apiKey, `${nanp(2)},2024-01-01,${'x'.repeat(9_977)}\n`, 200);
      expect({ status: chunked.status, code: chunked.body.error.code }).toEqual({ status: 413, code: 'payload_too_large' });
      expectError(await importCsv(t.apiKey, `${nanp(3)},"2024-01-01\n`), 400, 'bad_request');
      expect(await stored(t.tenantId)).toEqual([]);
      expect(await audits(t.tenantId)).toEqual([]);
    });

    it('refuses other media types with 415', async () => {
      for (const type of ['application/json', 'text/plain', 'text/csv; charset=windows-1252']) {
        expectError(await importCsv(tenant.apiKey, `${nanp(1)},2024-01-01\n`, { 'content-type': type }), 415, 'unsupported_media_type');
      }
    });

    it('needs a credential (401), an active tenant (403) and management scope (403 for a widget token)', async () => {
      expectError(await importCsv('', `${nanp(1)},2024-01-01\n`), 401, 'unauthorized');
      const t = await provisionTenant(app);
      expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN })).status).toBe(200);
      expectError(await importCsv(t.apiKey, `${nanp(1)},2024-01-01\n`), 403, 'forbidden');
      expectError(await lookup(t.apiKey, nanp(1)), 403, 'forbidden');

      const router = widgetRouter(tenant, reassignedNumberRoutes(app.deps));
      const post = await router.request('/v1/reassigned-numbers/import', { method: 'POST', headers: { 'content-type': 'text/csv' }, body: `${nanp(1)},2024-01-01\n` });
      expect(post.status).toBe(403);
      const get = await router.request(`/v1/reassigned-numbers?phone=${encodeURIComponent(nanp(1))}`);
      expect(get.status).toBe(403);
      expect(((await get.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    });
  });

  describe('GET /v1/reassigned-numbers', () => {
    it('returns the stored dates of one number, latest first', async () => {
      const t = await provisionTenant(app);
      await importCsv(t.apiKey, `${nanp(50)},2023-05-05\n${nanp(50)},2025-07-07\n${nanp(51)},2024-01-01\n`);
      const res = await lookup(t.apiKey, nanp(50));
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['reassigned_numbers']);
      expect(res.body.reassigned_numbers).toEqual([
        { phone_e164: nanp(50), disconnected_on: '2025-07-07', source: 'import', created_at: expect.stringMatching(ISO_RE) },
        { phone_e164: nanp(50), disconnected_on: '2023-05-05', source: 'import', created_at: expect.stringMatching(ISO_RE) },
      ]);
      expect((await lookup(t.apiKey, nanp(52))).body).toEqual({ reassigned_numbers: [] });
    });

    it('reads a literal + (decoded as a space) as the plus sign', async () => {
      const t = await provisionTenant(app);
      await importCsv(t.apiKey, `${nanp(60)},2024-02-02\n`);
      const res = await app.request('GET', `/v1/reassigned-numbers?phone=${nanp(60)}`, { token: t.apiKey });
      expect(res.status).toBe(200);
      expect(res.body.reassigned_numbers.map((r: { disconnected_on: string }) => r.disconnected_on)).toEqual(['2024-02-02']);
    });

    it('answers 400 without phone or with a phone that is not E.164', async () => {
      expectError(await app.request('GET', '/v1/reassigned-numbers', { token: tenant.apiKey }), 400, 'bad_request');
      for (const phone of ['3122000001', '+1 312 200 0001', 'abc', '', '+0123456789', '+1312200000123456789']) {
        const res = await lookup(tenant.apiKey, phone);
        expect({ phone, status: res.status, code: res.body.error?.code }).toEqual({ phone, status: 400, code: 'bad_request' });
      }
    });

    it('answers 422 for a phone of the published E.164 pattern that its country cannot have', async () => {
      expectError(await lookup(tenant.apiKey, '+1212555'), 422, 'unprocessable');
    });

    it('needs a credential', async () => {
      expectError(await app.request('GET', `/v1/reassigned-numbers?phone=${encodeURIComponent(nanp(1))}`), 401, 'unauthorized');
    });

    it('is open to a dashboard session', async () => {
      const t = await provisionTenant(app);
      const session = await createUserSession(app, t);
      expect((await importCsv(session.token, `${nanp(70)},2024-03-03\n`)).body.recorded).toBe(1);
      expect((await lookup(session.token, nanp(70))).body.reassigned_numbers).toHaveLength(1);
      expect((await audits(t.tenantId))[0]).toMatchObject({ actorType: 'user', actorId: session.userId });
    });

    it('keeps tenants apart: B never sees A’s dates', async () => {
      const a = await provisionTenant(app);
      const b = await provisionTenant(app);
      await importCsv(a.apiKey, `${nanp(80)},2024-04-04\n`);
      await importCsv(b.apiKey, `${nanp(80)},2022-02-02\n`);
      expect((await lookup(a.apiKey, nanp(80))).body.reassigned_numbers.map((r: { disconnected_on: string }) => r.disconnected_on)).toEqual(['2024-04-04']);
      expect((await lookup(b.apiKey, nanp(80))).body.reassigned_numbers.map((r: { disconnected_on: string }) => r.disconnected_on)).toEqual(['2022-02-02']);
      const c = await provisionTenant(app);
      expect((await lookup(c.apiKey, nanp(80))).body).toEqual({ reassigned_numbers: [] });
    });
  });
});
