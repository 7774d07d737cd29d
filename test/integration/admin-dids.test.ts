import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

let serial = 3000;
const nextNumber = () => `+1646555${String(serial++).padStart(4, '0')}`;
/** A loopback address of its own, so the failed-authentication count of one test never touches another's. */
const freshOrigin = () => `127.${100 + Math.floor(Math.random() * 100)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

describe('POST /v1/admin/tenants/{id}/dids', () => {
  let app: TestApp;
  let tenant: ProvisionedTenant;
  let other: ProvisionedTenant;

  const provisionDids = (tenantId: string, body: unknown, token: string | null = ADMIN_TOKEN, localAddress?: string) =>
    app.request('POST', `/v1/admin/tenants/${tenantId}/dids`, { token, body, localAddress });
  const audits = (t: ProvisionedTenant, didId: string) =>
    withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findMany({ where: { subjectType: 'did', subjectId: didId }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }));

  beforeAll(async () => {
    app = await startTestApp();
    [tenant, other] = await Promise.all([provisionTenant(app), provisionTenant(app)]);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('adds house DIDs with the given settings, audited as operator', async () => {
    const [n1, n2] = [nextNumber(), nextNumber()];
    const res = await provisionDids(tenant.tenantId, { e164s: [n2, n1], attestation: 'A', us_state: 'ny', labels: ['house-pool'] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ created: 2, existing: 0 });
    expect(res.body.dids.map((d: { e164: string }) => d.e164)).toEqual([n1, n2]);
    for (const did of res.body.dids) {
      expect(did).toMatchObject({ tenant_id: tenant.tenantId, origin: 'house', status: 'active', attestation: 'A', us_state: 'NY', npa: '646', labels: ['house-pool'], notes: null, verification: null });
      const entries = await audits(tenant, did.id);
      expect(entries.map((e) => [e.action, e.actorType, e.actorId])).toEqual([['did.created', 'operator', null]]);
      expect(entries[0]!.payload).toMatchObject({ e164: did.e164, origin: 'house' });
    }
    const listed = await app.request('GET', '/v1/dids', { token: tenant.apiKey });
    expect(listed.body.dids.filter((d: { e164: string }) => [n1, n2].includes(d.e164))).toHaveLength(2);
  });

  it('is idempotent: numbers the tenant holds (any origin or status) are reported unchanged, never duplicated', async () => {
    const customer = nextNumber();
    const retired = nextNumber();
    await app.request('POST', '/v1/dids', { token: tenant.apiKey, body: { e164: customer, labels: ['mine'] } });
    await app.request('POST', '/v1/dids', { token: tenant.apiKey, body: { e164: retired, status: 'retired' } });
    const fresh = nextNumber();
    const res = await provisionDids(tenant.tenantId, { e164s: [customer, retired, fresh, fresh] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ created: 1, existing: 2 });
    const byNumber = Object.fromEntries(res.body.dids.map((d: { e164: string }) => [d.e164, d]));
    expect(byNumber[customer]).toMatchObject({ origin: 'customer', labels: ['mine'], status: 'quarantine' });
    expect(byNumber[retired]).toMatchObject({ origin: 'customer', status: 'retired' });
    expect(byNumber[fresh]).toMatchObject({ origin: 'house', attestation: 'unknown', labels: [], us_state: null });
    const again = await provisionDids(tenant.tenantId, { e164s: [fresh] });
    expect(again.body).toMatchObject({ created: 0, existing: 1, dids: [expect.objectContaining({ id: byNumber[fresh].id })] });
    expect(await audits(tenant, byNumber[fresh].id)).toHaveLength(1);
  });

  it('a number is active in one tenant at most: 409 naming the number, never the tenant; once retired it may go to another tenant', async () => {
    const shared = nextNumber();
    const first = await provisionDids(tenant.tenantId, { e164s: [shared] });
    const refused = await provisionDids(other.tenantId, { e164s: [shared] });
    expectError(refused, 409, 'conflict', new RegExp(shared.replace('+', '\\+')));
    expect(refused.text).not.toContain(tenant.tenantId);
    expect((await app.request('GET', '/v1/dids', { token: other.apiKey })).body.dids.map((d: { e164: string }) => d.e164)).not.toContain(shared);
    expect((await app.request('DELETE', `/v1/dids/${first.body.dids[0].id}`, { token: tenant.apiKey })).status).toBe(200);
    const second = await provisionDids(other.tenantId, { e164s: [shared] });
    expect(second.body).toMatchObject({ created: 1, existing: 0 });
    expect(second.body.dids[0].id).not.toBe(first.body.dids[0].id);
    expect((await app.request('GET', `/v1/dids/${first.body.dids[0].id}`, { token: other.apiKey })).status).toBe(404);
  });

  it.each([
    ['no numbers', { e164s: [] }, /1 to 1000/],
    ['too many numbers', { e164s: Array.from({ length: 1001 }, (_, i) => `+1646556${String(i).padStart(4, '0')}`) }, /1 to 1000/],
    ['a number that is not E.164', { e164s: ['+16465550001', '6465550002'] }, /6465550002/],
    ['an unknown attestation', { e164s: ['+16465550001'], attestation: 'D' }, /attestation/],
    ['a bad us_state', { e164s: ['+16465550001'], us_state: 'New York' }, /us_state/],
    ['a duplicate label', { e164s: ['+16465550001'], labels: ['x', 'x'] }, /labels/],
  ])('422 unprocessable for %s; nothing is added', async (_label, body, message) => {
    expectError(await provisionDids(tenant.tenantId, body), 422, 'unprocessable', message);
    const listed = await app.request('GET', '/v1/dids', { token: tenant.apiKey });
    expect(listed.body.dids.map((d: { e164: string }) => d.e164)).not.toContain('+16465550001');
  });

  it.each([
    ['missing e164s', {}],
    ['e164s not an array', { e164s: '+16465550001' }],
    ['a number of the wrong type', { e164s: [16465550001] }],
    ['origin', { e164s: ['+16465550001'], origin: 'customer' }],
    ['an unknown key', { e164s: ['+16465550001'], tenant_id: 'x' }],
  ])('400 bad_request for %s', async (_label, body) => {
    expectError(await provisionDids(tenant.tenantId, body), 400, 'bad_request');
  });

  it('400 for malformed JSON, 415 for a non-JSON body, 413 over 8 MiB', async () => {
    const path = `/v1/admin/tenants/${tenant.tenantId}/dids`;
    expectError(await app.request('POST', path, { token: ADMIN_TOKEN, rawBody: '{', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
    expectError(await app.request('POST', path, { token: ADMIN_TOKEN, rawBody: 'x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    expectError(await provisionDids(tenant.tenantId, { e164s: ['x'.repeat(9 * 1024 * 1024)] }), 413, 'payload_too_large');
  });

  it('404 for an unknown or malformed tenant id', async () => {
    expectError(await provisionDids(randomUUID(), { e164s: [nextNumber()] }), 404, 'not_found');
    expectError(await provisionDids('not-a-uuid', { e164s: [nextNumber()] }), 404, 'not_found');
  });

  it('401 without the operator bearer (a tenant key included), then 429 after 10 failed guesses from one address', async () => {
    const origin = freshOrigin();
    expectError(await provisionDids(tenant.tenantId, { e164s: [nextNumber()] }, null, origin), 401, 'unauthorized');
    expectError(await provisionDids(tenant.tenantId, { e164s: [nextNumber()] }, tenant.apiKey, origin), 401, 'unauthorized');
    // A request without a bearer guesses nothing and is not counted: the tenant key and nine wrong tokens are the ten.
    for (let i = 0; i < 9; i += 1) expectError(await provisionDids(tenant.tenantId, { e164s: [nextNumber()] }, `wrong-${i}`, origin), 401, 'unauthorized');
    const number = nextNumber();
    expectError(await provisionDids(tenant.tenantId, { e164s: [number] }, ADMIN_TOKEN, origin), 429, 'rate_limited');
    const listed = await app.request('GET', '/v1/dids', { token: tenant.apiKey });
    expect(listed.body.dids.map((d: { e164: string }) => d.e164)).not.toContain(number);
  });
});
