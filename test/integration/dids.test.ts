import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { didRoutes } from '../../src/modules/dids/did.routes';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { startPlatformSms, type PlatformSms } from '../helpers/platform-sms';
import { widgetRouter } from '../helpers/widget';

const MiB = 1024 * 1024;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FIELDS = ['id', 'tenant_id', 'e164', 'npa', 'us_state', 'attestation', 'status', 'origin', 'labels', 'notes', 'created_at', 'updated_at', 'verification'];

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

let serial = 5000;
/** A fresh +1 212 number per call, so tests never collide on e164 (billing-invoice takes +1 212 555 1xxx). */
const nextNumber = (npa = '212') => `+1${npa}555${String(serial++).padStart(4, '0')}`;

describe('DID registry', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;
  let other: ProvisionedTenant;
  let platform: PlatformSms;

  const post = (token: string, body: unknown) => app.request('POST', '/v1/dids', { token, body });
  const patch = (token: string, id: string, body: unknown) => app.request('PATCH', `/v1/dids/${id}`, { token, body });
  const get = (token: string, id: string) => app.request('GET', `/v1/dids/${id}`, { token });
  const del = (token: string, id: string) => app.request('DELETE', `/v1/dids/${id}`, { token });
  const list = (token: string, query = '') => app.request('GET', `/v1/dids${query}`, { token });
  /** Registered without asking for activation (quarantine) unless the body says otherwise: activation texts a code. */
  const create = async (t: ProvisionedTenant, body: Record<string, unknown> = {}) => {
    const res = await post(t.apiKey, { e164: nextNumber(), status: 'quarantine', ...body });
    expect({ status: res.status, body: res.status === 201 ? null : res.body }).toEqual({ status: 201, body: null });
    return res.body.did;
  };
  const audits = (t: ProvisionedTenant, didId: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) =>
      tx.auditLog.findMany({ where: { subjectType: 'did', subjectId: didId }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }),
    );
  /** An active DID as the operator provisions it (house). */
  const provisionActive = async (t: ProvisionedTenant, e164 = nextNumber()) => {
    const res = await app.request('POST', `/v1/admin/tenants/${t.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [e164] } });
    expect(res.status).toBe(201);
    return res.body.dids[0];
  };
  const countDids = (t: ProvisionedTenant) => withTenant(app.deps.db, t.tenantId, (tx) => tx.did.count());

  beforeAll(async () => {
    platform = await startPlatformSms();
    app = await startTestApp(platform.env());
    tenant = await provisionTenant(app);
    other = await provisionTenant(app);
  });
  afterAll(async () => {
    await app.close();
    await platform.close();
  });

  // -------------------------------------------------------------------------------------------
  describe('POST /v1/dids', () => {
    it('registers a number with its defaults and the npa derived from a +1 number, asking for activation; audited', async () => {
      const e164 = nextNumber('646');
      const res = await post(tenant.apiKey, { e164 });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['did']);
      expect(Object.keys(res.body.did)).toEqual(FIELDS);
      expect(res.body.did).toEqual({
        id: expect.stringMatching(UUID_RE),
        tenant_id: tenant.tenantId,
        e164,
        npa: '646',
        us_state: null,
        attestation: 'unknown',
        // Active is asked for: the DID waits in quarantine for the code texted to the number.
        status: 'quarantine',
        origin: 'customer',
        labels: [],
        notes: null,
        created_at: expect.stringMatching(ISO_RE),
        updated_at: expect.stringMatching(ISO_RE),
        verification: { status: 'pending', method: 'sms', expires_at: expect.stringMatching(ISO_RE), attempts_left: 5 },
      });
      expect(platform.codesTo(e164)).toHaveLength(1);
      expect((await get(tenant.apiKey, res.body.did.id)).body).toEqual(res.body);
      const rows = await audits(tenant, res.body.did.id);
      expect(rows.map((r) => r.action)).toEqual(['did.created', 'did.verification_sent']);
      expect(rows[0]).toMatchObject({ actorType: 'api_key' });
      expect(rows[0]!.payload).toMatchObject({ e164, npa: '646', origin: 'customer', status: 'quarantine' });
    });

    it('stores every field; us_state uppercased; origin accepted and ignored (always customer)', async () => {
      const e164 = nextNumber('305');
      const body = { e164, npa: '305', us_state: 'fl', attestation: 'A', status: 'quarantine', labels: ['miami', ' pool-b '], notes: 'Ported in 2026', origin: 'house' };
      const res = await post(tenant.apiKey, body);
      expect(res.status).toBe(201);
      expect(res.body.did).toMatchObject({ e164, npa: '305', us_state: 'FL', attestation: 'A', status: 'quarantine', labels: ['miami', 'pool-b'], notes: 'Ported in 2026', origin: 'customer' });
      for (const origin of ['customer', 'anything', 5, null]) expect((await create(tenant, { origin })).origin).toBe('customer');
    });

    it('leaves npa null for a non-+1 number unless given, and takes an explicit null on a +1 number', async () => {
      expect((await create(tenant, { e164: '+442071838750' })).npa).toBeNull();
      expect((await create(tenant, { e164: '+442071838751', npa: '207' })).npa).toBe('207');
      expect((await create(tenant, { npa: null })).npa).toBeNull();
    });

    it('accepts every attestation and status', async () => {
      for (const attestation of ['A', 'B', 'C', 'unknown']) expect((await create(tenant, { attestation })).attestation).toBe(attestation);
      for (const status of ['quarantine', 'retired']) expect((await create(tenant, { status })).status).toBe(status);
      expect((await create(tenant, { status: 'active' })).status).toBe('quarantine');
    });

    it('is 409 on a duplicate e164 in the tenant and allows it in another tenant while it is active nowhere', async () => {
      const e164 = nextNumber();
      await create(tenant, { e164 });
      const before = await countDids(tenant);
      expectError(await post(tenant.apiKey, { e164 }), 409, 'conflict');
      expectError(await post(tenant.apiKey, { e164, status: 'retired' }), 409, 'conflict');
      expect(await countDids(tenant)).toBe(before);
      expect((await post(other.apiKey, { e164 })).status).toBe(201);
    });

    it.each(['id', 'tenant_id', 'created_at', 'updated_at', 'provider', 'health'])('refuses the key %s with 400 bad_request naming it', async (key) => {
      const t = await provisionTenant(app);
      const value = key.endsWith('_at') ? new Date().toISOString() : randomUUID();
      expectError(await post(t.apiKey, { e164: nextNumber(), [key]: value }), 400, 'bad_request', new RegExp(`'${key}'`));
      expect(await countDids(t)).toBe(0);
    });

    it.each([
      ['e164', {}],
      ['e164', { e164: null }],
      ['e164', { e164: 12125550100 }],
      ['npa', { npa: 212 }],
      ['us_state', { us_state: 1 }],
      ['attestation', { attestation: null }],
      ['status', { status: null }],
      ['labels', { labels: 'a' }],
      ['labels', { labels: [1] }],
      ['labels', { labels: null }],
      ['notes', { notes: 5 }],
    ])('answers a wrong JSON type of %s with 400 bad_request naming it', async (field, body) => {
      const payload = field === 'e164' ? body : { e164: nextNumber(), ...body };
      expectError(await post(tenant.apiKey, payload), 400, 'bad_request', new RegExp(field));
    });

    it.each([
      ['an e164 without plus', { e164: '12125550100' }, /e164/],
      ['a local number', { e164: '2125550100' }, /e164/],
      ['a too-short number', { e164: '+1212' }, /e164/],
      ['spaces in the number', { e164: '+1 212 555 0100' }, /e164/],
      ['an empty e164', { e164: '' }, /e164/],
      ['an npa of two digits', { npa: '21' }, /npa must be three digits/],
      ['an npa of four digits', { npa: '2125' }, /npa/],
      ['an npa starting with 0', { npa: '012' }, /npa/],
      ['letters as npa', { npa: 'abc' }, /npa/],
      ['a one-letter us_state', { us_state: 'N' }, /us_state must be a two-letter code/],
      ['a three-letter us_state', { us_state: 'NYC' }, /us_state/],
      ['a us_state with a digit', { us_state: 'N1' }, /us_state/],
      ['an attestation outside A, B, C, unknown', { attestation: 'D' }, /attestation must be one of A, B, C, unknown/],
      ['a lowercase attestation', { attestation: 'a' }, /attestation/],
      ['a status outside the vocabulary', { status: 'deleted' }, /status must be one of active, quarantine, retired/],
      ['a capitalized status', { status: 'Active' }, /status/],
      ['an empty label', { labels: [''] }, /labels/],
      ['a blank label', { labels: ['  '] }, /labels/],
      ['a label over 64 characters', { labels: ['l'.repeat(65)] }, /1 to 64 characters/],
      ['more than 32 labels', { labels: Array.from({ length: 33 }, (_, i) => `l${i}`) }, /at most 32/],
      ['a repeated label', { labels: ['a', 'a'] }, /twice/],
      ['notes over 2000 characters', { notes: 'n'.repeat(2001) }, /notes must be at most 2000 characters/],
    ])('refuses %s with 400 invalid and stores nothing', async (_label, body, message) => {
      const t = await provisionTenant(app);
      expectError(await post(t.apiKey, { e164: nextNumber(), ...body }), 400, 'invalid', message);
      expect(await countDids(t)).toBe(0);
    });

    it('refuses with 422 unprocessable an e164 its country cannot have, and an npa that is not the area code of a +1 number', async () => {
      const t = await provisionTenant(app);
      expectError(await post(t.apiKey, { e164: '+1212555' }), 422, 'unprocessable', /not a possible number/);
      expectError(await post(t.apiKey, { e164: '+12125550000', npa: '646' }), 422, 'unprocessable', /npa must be the area code of \+12125550000 \(212\)/);
      expect(await countDids(t)).toBe(0);
    });

    it('accepts the limits: 32 labels of 64 characters, notes of 2000 characters', async () => {
      const labels = Array.from({ length: 32 }, (_, i) => `${i}`.padEnd(64, 'x'));
      const did = await create(tenant, { labels, notes: 'n'.repeat(2000) });
      expect(did.labels).toEqual(labels);
      expect(did.notes).toHaveLength(2000);
    });

    it('answers 415 for a non-JSON body and 413 for a body over 8 MiB', async () => {
      expectError(
        await app.request('POST', '/v1/dids', { token: tenant.apiKey, rawBody: '{}', headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      );
      expectError(
        await app.request('POST', '/v1/dids', { token: tenant.apiKey, headers: { 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) } }),
        413,
        'payload_too_large',
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('GET /v1/dids', () => {
    it('lists the tenant\'s DIDs ordered by e164, filtered by status, in pages', async () => {
      const t = await provisionTenant(app);
      expect((await list(t.apiKey)).body).toEqual({ dids: [], next_cursor: null });
      const numbers = ['+14155550003', '+12025550001', '+442071838799', '+13125550002', '+12025550000'];
      const statuses = ['active', 'quarantine', 'retired', 'active', 'quarantine'];
      const made = [];
      for (let i = 0; i < numbers.length; i++) {
        made.push(statuses[i] === 'active' ? await provisionActive(t, numbers[i]) : await create(t, { e164: numbers[i], status: statuses[i] }));
      }
      await create(other, { e164: '+12025550002' });

      const all = await list(t.apiKey);
      expect(all.status).toBe(200);
      expect(Object.keys(all.body)).toEqual(['dids', 'next_cursor']);
      expect(all.body.dids.map((d: { e164: string }) => d.e164)).toEqual([...numbers].sort());
      expect(all.body.dids).toEqual([...made].sort((a, b) => (a.e164 < b.e164 ? -1 : 1)));
      expect(all.body.next_cursor).toBeNull();

      for (const status of ['active', 'quarantine', 'retired']) {
        const res = await list(t.apiKey, `?status=${status}`);
        const expected = numbers.filter((_, i) => statuses[i] === status).sort();
        expect({ status, e164s: res.body.dids.map((d: { e164: string }) => d.e164) }).toEqual({ status, e164s: expected });
      }

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: HttpResult = await list(t.apiKey, `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(res.status).toBe(200);
        seen.push(...res.body.dids.map((d: { e164: string }) => d.e164));
        cursor = res.body.next_cursor;
        pages++;
      } while (cursor);
      expect(seen).toEqual([...numbers].sort());
      expect(pages).toBe(3);

      const filtered = await list(t.apiKey, '?status=quarantine&limit=1');
      expect(filtered.body.dids.map((d: { e164: string }) => d.e164)).toEqual(['+12025550000']);
      const rest = await list(t.apiKey, `?status=quarantine&limit=1&cursor=${encodeURIComponent(filtered.body.next_cursor)}`);
      expect(rest.body).toEqual({ dids: [expect.objectContaining({ e164: '+12025550001' })], next_cursor: null });
    });

    it.each([
      '?status=deleted',
      '?status=',
      '?status=ACTIVE',
      '?limit=0',
      '?limit=1001',
      '?limit=x',
      '?cursor=garbage',
      `?cursor=${Buffer.from('["not-e164"]').toString('base64url')}`,
      `?cursor=${Buffer.from('["+12025550000","x"]').toString('base64url')}`,
    ])('answers %s with 400 bad_request', async (query) => {
      expectError(await list(tenant.apiKey, query), 400, 'bad_request');
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('GET /v1/dids/{id}', () => {
    it('is 404 for an unknown, a malformed and a foreign id', async () => {
      const did = await create(tenant);
      expect((await get(tenant.apiKey, did.id)).body).toEqual({ did });
      expectError(await get(tenant.apiKey, randomUUID()), 404, 'not_found');
      expectError(await get(tenant.apiKey, 'x'), 404, 'not_found');
      expectError(await get(other.apiKey, did.id), 404, 'not_found');
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('PATCH /v1/dids/{id}', () => {
    it('changes the fields sent, keeps the others; audited with the changes', async () => {
      const did = await create(tenant, { us_state: 'NY', labels: ['a'], notes: 'n' });
      const res = await patch(tenant.apiKey, did.id, { attestation: 'B', status: 'retired' });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['did']);
      expect(res.body.did).toEqual({ ...did, attestation: 'B', status: 'retired', updated_at: expect.stringMatching(ISO_RE) });
      expect((await get(tenant.apiKey, did.id)).body.did).toEqual(res.body.did);
      const rows = await audits(tenant, did.id);
      expect(rows.map((r) => r.action)).toEqual(['did.created', 'did.updated']);
      expect(rows[1]!.payload).toEqual({ changed: ['attestation', 'status'], values: { attestation: 'B', status: 'retired' } });
    });

    it('clears npa, us_state and notes with null (and notes with ""), labels with []', async () => {
      const did = await create(tenant, { us_state: 'NY', labels: ['a', 'b'], notes: 'n' });
      const res = await patch(tenant.apiKey, did.id, { npa: null, us_state: null, notes: null, labels: [] });
      expect(res.body.did).toMatchObject({ npa: null, us_state: null, notes: null, labels: [] });
      await patch(tenant.apiKey, did.id, { notes: 'again' });
      expect((await patch(tenant.apiKey, did.id, { notes: '' })).body.did.notes).toBeNull();
      // The npa can be set back, to the number's own area code only.
      expect((await patch(tenant.apiKey, did.id, { npa: '212' })).body.did.npa).toBe('212');
      expectError(await patch(tenant.apiKey, did.id, { npa: '718' }), 422, 'unprocessable', /area code/);
    });

    it('refuses e164 (immutable) and the rendered keys with 400 bad_request naming them, changing nothing', async () => {
      const did = await create(tenant);
      for (const [key, value] of [
        ['e164', nextNumber()],
        ['e164', did.e164],
        ['id', randomUUID()],
        ['tenant_id', randomUUID()],
        ['created_at', new Date().toISOString()],
        ['updated_at', new Date().toISOString()],
      ] as const) {
        expectError(await patch(tenant.apiKey, did.id, { [key]: value, status: 'quarantine' }), 400, 'bad_request', new RegExp(`'${key}'`));
      }
      expect((await get(tenant.apiKey, did.id)).body.did).toEqual(did);
    });

    it('ignores origin', async () => {
      const did = await create(tenant);
      const res = await patch(tenant.apiKey, did.id, { origin: 'house' });
      expect(res.body.did).toEqual(did);
      expect((await audits(tenant, did.id)).map((r) => r.action)).toEqual(['did.created']);
    });

    it.each([
      ['npa', { npa: '1' }],
      ['us_state', { us_state: 'New York' }],
      ['attestation', { attestation: 'X' }],
      ['status', { status: 'gone' }],
      ['labels', { labels: ['x'.repeat(65)] }],
      ['notes', { notes: 'n'.repeat(2001) }],
    ])('refuses an invalid %s with 400 invalid, changing nothing', async (field, body) => {
      const did = await create(tenant);
      expectError(await patch(tenant.apiKey, did.id, body), 400, 'invalid', new RegExp(field));
      expect((await get(tenant.apiKey, did.id)).body.did).toEqual(did);
    });

    it.each([
      ['status', { status: null }],
      ['attestation', { attestation: 1 }],
      ['labels', { labels: null }],
    ])('refuses a wrong type of %s with 400 bad_request', async (field, body) => {
      const did = await create(tenant);
      expectError(await patch(tenant.apiKey, did.id, body), 400, 'bad_request', new RegExp(field));
    });

    it('can set a retired house DID active again; an unverified customer DID is 422; a patch that changes nothing records nothing', async () => {
      const did = await create(tenant, { status: 'retired' });
      expect((await patch(tenant.apiKey, did.id, { status: 'retired', labels: [] })).body.did).toEqual(did);
      expect((await audits(tenant, did.id)).map((r) => r.action)).toEqual(['did.created']);
      expectError(await patch(tenant.apiKey, did.id, { status: 'active' }), 422, 'unprocessable', /proving control/);
      expect((await get(tenant.apiKey, did.id)).body.did).toEqual(did);
      const house = await provisionActive(tenant);
      expect((await del(tenant.apiKey, house.id)).body.did.status).toBe('retired');
      expect((await patch(tenant.apiKey, house.id, { status: 'active' })).body.did.status).toBe('active');
    });

    it('is 404 for an unknown, a malformed and a foreign id, and the foreign DID is untouched', async () => {
      const did = await create(tenant);
      expectError(await patch(tenant.apiKey, randomUUID(), { status: 'active' }), 404, 'not_found');
      expectError(await patch(tenant.apiKey, '123', { status: 'active' }), 404, 'not_found');
      expectError(await patch(other.apiKey, did.id, { status: 'quarantine' }), 404, 'not_found');
      expect((await get(tenant.apiKey, did.id)).body.did).toEqual(did);
    });

    it('answers 415 for a non-JSON body and 413 for a body over 8 MiB', async () => {
      const did = await create(tenant);
      expectError(
        await app.request('PATCH', `/v1/dids/${did.id}`, { token: tenant.apiKey, rawBody: '{}', headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      );
      expectError(
        await app.request('PATCH', `/v1/dids/${did.id}`, {
          token: tenant.apiKey,
          headers: { 'content-type': 'application/json', 'content-length': String(8 * MiB + 1) },
        }),
        413,
        'payload_too_large',
      );
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('DELETE /v1/dids/{id}', () => {
    it('retires the DID (200 {did}), keeps the row, and is idempotent with one audit entry', async () => {
      const did = await create(tenant, { status: 'quarantine' });
      const before = await countDids(tenant);
      const res = await del(tenant.apiKey, did.id);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['did']);
      expect(res.body.did).toEqual({ ...did, status: 'retired', updated_at: expect.stringMatching(ISO_RE) });
      const again = await del(tenant.apiKey, did.id);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(res.body);
      expect(await countDids(tenant)).toBe(before);
      expect((await get(tenant.apiKey, did.id)).body.did.status).toBe('retired');
      expect((await list(tenant.apiKey, '?status=retired&limit=1000')).body.dids.map((d: { id: string }) => d.id)).toContain(did.id);
      const rows = await audits(tenant, did.id);
      expect(rows.map((r) => r.action)).toEqual(['did.created', 'did.retired']);
      expect(rows[1]!.payload).toEqual({ previous_status: 'quarantine' });
    });

    it('is 404 for an unknown, a malformed and a foreign id, and the foreign DID stays active', async () => {
      const did = await provisionActive(tenant);
      expectError(await del(tenant.apiKey, randomUUID()), 404, 'not_found');
      expectError(await del(tenant.apiKey, 'zzz'), 404, 'not_found');
      expectError(await del(other.apiKey, did.id), 404, 'not_found');
      expect((await get(tenant.apiKey, did.id)).body.did.status).toBe('active');
    });
  });

  // -------------------------------------------------------------------------------------------
  describe('credentials and scope', () => {
    const routes = (id: string): [string, string, unknown][] => [
      ['GET', '/v1/dids', undefined],
      ['POST', '/v1/dids', { e164: nextNumber() }],
      ['GET', `/v1/dids/${id}`, undefined],
      ['PATCH', `/v1/dids/${id}`, { status: 'quarantine' }],
      ['DELETE', `/v1/dids/${id}`, undefined],
      ['POST', `/v1/dids/${id}/verification`, undefined],
      ['POST', `/v1/dids/${id}/verify`, { code: '123456' }],
    ];

    it('answers 401 without a credential or with an unknown one', async () => {
      const did = await create(tenant);
      for (const [method, path, body] of routes(did.id)) {
        expectError(await app.request(method, path, { body }), 401, 'unauthorized');
        expectError(await app.request(method, path, { token: `dd_${'y'.repeat(43)}`, body }), 401, 'unauthorized');
      }
      expect((await get(tenant.apiKey, did.id)).body.did).toEqual(did);
    });

    it('answers 403 for a suspended tenant', async () => {
      const t = await provisionTenant(app);
      const did = await create(t);
      expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/suspend`, { token: ADMIN_TOKEN })).status).toBe(200);
      for (const [method, path, body] of routes(did.id)) expectError(await app.request(method, path, { token: t.apiKey, body }), 403, 'forbidden');
    });

    it('answers 403 for a widget token (management scope) on every route', async () => {
      const did = await create(tenant);
      const router = widgetRouter(tenant, didRoutes(app.deps));
      for (const [method, path, body] of routes(did.id)) {
        const res = await router.request(path, {
          method,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
      }
      expect((await get(tenant.apiKey, did.id)).body.did).toEqual(did);
    });
  });
});
