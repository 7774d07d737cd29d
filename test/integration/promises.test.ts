import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import {
  ADMIN_TOKEN,
  createUserSession,
  provisionTenant,
  startTestApp,
  type HttpResult,
  type ProvisionedTenant,
  type TestApp,
} from '../helpers/harness';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

const PROMISE_FIELDS = ['id', 'debt_id', 'call_attempt_id', 'amount_cents', 'currency', 'promised_date', 'note', 'status', 'created_at', 'updated_at'].sort();
const DAY = 86_400_000;

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

const utcDay = (days: number) => new Date(Date.now() + days * DAY).toISOString().slice(0, 10);

interface Debt {
  id: string;
  originalId: string;
}

/** A debt (in `state`) with one original call attempt. */
async function seedDebt(tenant: ProvisionedTenant, state = 'open'): Promise<Debt> {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const debt = await tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef: `ext-${randomUUID()}`, consumerRef: 'cons', state } });
    const original = await tx.callAttempt.create({
      data: { tenantId: tenant.tenantId, debtId: debt.id, consumerRef: 'cons', debtKey: debt.externalRef, toNumber: '+13035550100', disposition: 'answered_human' },
    });
    return { id: debt.id, originalId: original.id };
  });
}

/** A promise made the way the product makes them: a promise_to_pay disposition. */
async function promiseFor(tenant: ProvisionedTenant, debt: Debt, over: Record<string, unknown> = {}) {
  const res = await app.request('POST', `/v1/call_attempts/${debt.originalId}/disposition`, {
    token: tenant.apiKey,
    body: { disposition: 'promise_to_pay', promise: { amount_cents: 5000, currency: 'USD', promised_date: utcDay(10), note: 'pay day', ...over } },
  });
  if (res.status !== 201) throw new Error(`promiseFor: ${res.status} ${res.text}`);
  return res.body.promise as { id: string; call_attempt_id: string; created_at: string };
}

/** Promises written directly with chosen creation times (for ordering and paging). */
async function seedPromises(tenant: ProvisionedTenant, debt: Debt, createdAts: Date[], status = 'pending') {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const made = [];
    for (const createdAt of createdAts) {
      made.push(
        await tx.paymentPromise.create({
          data: {
            tenantId: tenant.tenantId,
            debtId: debt.id,
            callAttemptId: debt.originalId,
            amountCents: 100n,
            currency: 'MXN',
            promisedDate: new Date(`${utcDay(5)}T00:00:00Z`),
            status,
            createdAt,
          },
        }),
      );
    }
    return made;
  });
}

const list = (tenant: ProvisionedTenant, query = '') => app.request('GET', `/v1/promises${query ? `?${query}` : ''}`, { token: tenant.apiKey });
const patch = (tenant: ProvisionedTenant, id: string, body: unknown, token = tenant.apiKey) => app.request('PATCH', `/v1/promises/${id}`, { token, body });
const ids = (res: HttpResult) => (res.body.promises as { id: string }[]).map((p) => p.id);
const debtState = (tenant: ProvisionedTenant, id: string) =>
  withTenant(app.deps.db, tenant.tenantId, async (tx) => (await tx.debt.findUniqueOrThrow({ where: { id } })).state);

describe('GET /v1/promises', () => {
  let tenant: ProvisionedTenant;
  let debtA: Debt;
  let debtB: Debt;
  let seeded: { id: string; status: string; debtId: string }[];
  beforeAll(async () => {
    tenant = await provisionTenant(app);
    debtA = await seedDebt(tenant);
    debtB = await seedDebt(tenant);
    const base = Date.parse('2026-10-01T12:00:00Z');
    const a = await seedPromises(tenant, debtA, [new Date(base), new Date(base + 1000), new Date(base + 1000)]);
    const b = await seedPromises(tenant, debtB, [new Date(base + 2000)], 'kept');
    const c = await seedPromises(tenant, debtB, [new Date(base + 3000)], 'broken');
    seeded = [...a, ...b, ...c];
  });
  /** The seeded rows in the route's order: created_at then id, newest first. */
  const expected = (pick: (p: { status: string; debtId: string }) => boolean = () => true) =>
    [...seeded]
      .filter(pick)
      .sort((x: any, y: any) => y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : -1))
      .map((p) => p.id);

  it('lists promises newest first with exactly the contract fields', async () => {
    const res = await list(tenant);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['next_cursor', 'promises']);
    expect(ids(res)).toEqual(expected());
    expect(res.body.next_cursor).toBeNull();
    for (const p of res.body.promises) expect(Object.keys(p).sort()).toEqual(PROMISE_FIELDS);
    const oldest = res.body.promises[4];
    expect(oldest).toEqual({
      id: seeded[0]!.id,
      debt_id: debtA.id,
      call_attempt_id: debtA.originalId,
      amount_cents: 100,
      currency: 'MXN',
      promised_date: utcDay(5),
      note: null,
      status: 'pending',
      created_at: '2026-10-01T12:00:00.000Z',
      updated_at: expect.any(String),
    });
  });

  it('filters by status and debt_id', async () => {
    expect(ids(await list(tenant, 'status=pending'))).toEqual(expected((p) => p.status === 'pending'));
    expect(ids(await list(tenant, 'status=kept'))).toEqual(expected((p) => p.status === 'kept'));
    expect(ids(await list(tenant, 'status=cancelled'))).toEqual([]);
    expect(ids(await list(tenant, `debt_id=${debtB.id}`))).toEqual(expected((p) => p.debtId === debtB.id));
    expect(ids(await list(tenant, `debt_id=${debtB.id}&status=broken`))).toEqual(expected((p) => p.debtId === debtB.id && p.status === 'broken'));
    expect(ids(await list(tenant, `debt_id=${randomUUID()}`))).toEqual([]);
  });

  it('pages without gaps or repeats, through equal creation times', async () => {
    for (const limit of [1, 2, 4]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: HttpResult = await list(tenant, `limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        expect(res.body.promises.length).toBeLessThanOrEqual(limit);
        seen.push(...ids(res));
        cursor = res.body.next_cursor;
        pages += 1;
      } while (cursor && pages < 20);
      expect(seen).toEqual(expected());
      expect(pages).toBe(Math.ceil(5 / limit));
    }
    expect((await list(tenant, 'limit=1000')).status).toBe(200);
  });

  it.each(['status=open', 'status=', 'status=kept&status=broken', 'debt_id=nope', 'limit=0', 'limit=1001', 'limit=two', 'cursor=abc'])(
    'rejects %s with 400 bad_request',
    async (query) => {
      expectError(await list(tenant, query), 400, 'bad_request');
    },
  );

  it("never shows another tenant's promises", async () => {
    const other = await provisionTenant(app);
    expect((await list(other)).body).toEqual({ promises: [], next_cursor: null });
    expect((await list(other, `debt_id=${debtA.id}`)).body.promises).toEqual([]);
  });
});

describe('PATCH /v1/promises/{id}', () => {
  let tenant: ProvisionedTenant;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
  });

  it.each(['kept', 'broken', 'cancelled'])('moves pending to %s, audited; the next PATCH is 409', async (status) => {
    const debt = await seedDebt(tenant);
    const promise = await promiseFor(tenant, debt);
    expect(await debtState(tenant, debt.id)).toBe('promise_to_pay');
    const res = await patch(tenant, promise.id, { status });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['promise']);
    expect(Object.keys(res.body.promise).sort()).toEqual(PROMISE_FIELDS);
    expect(res.body.promise).toMatchObject({ id: promise.id, status, debt_id: debt.id, call_attempt_id: promise.call_attempt_id, note: 'pay day' });
    expect(Date.parse(res.body.promise.updated_at)).toBeGreaterThanOrEqual(Date.parse(promise.created_at));
    // Its last pending promise resolved: the debt goes back to collection.
    expect(await debtState(tenant, debt.id)).toBe('in_collection');
    for (const again of ['kept', 'broken', 'cancelled']) {
      const refused = await patch(tenant, promise.id, { status: again });
      expectError(refused, 409, 'conflict');
    }
    const audit = await withTenant(app.deps.db, tenant.tenantId, (tx) =>
      tx.auditLog.findMany({ where: { subjectType: 'debt', subjectId: debt.id, action: { startsWith: 'promise.' } } }),
    );
    expect(audit.map((a) => [a.action, a.payload])).toEqual([
      [`promise.${status}`, { promise_id: promise.id, from: 'pending', to: status, debt_state: { from: 'promise_to_pay', to: 'in_collection' } }],
    ]);
    const listed = await list(tenant, `debt_id=${debt.id}`);
    expect(listed.body.promises).toEqual([res.body.promise]);
  });

  it('keeps the debt in promise_to_pay while another promise of it is pending', async () => {
    const debt = await seedDebt(tenant);
    const first = await promiseFor(tenant, debt);
    const second = await promiseFor(tenant, debt, { promised_date: utcDay(40) });
    expect((await patch(tenant, first.id, { status: 'broken' })).status).toBe(200);
    expect(await debtState(tenant, debt.id)).toBe('promise_to_pay');
    expect((await patch(tenant, second.id, { status: 'kept' })).status).toBe(200);
    expect(await debtState(tenant, debt.id)).toBe('in_collection');
  });

  it('leaves a debt alone that is no longer in promise_to_pay', async () => {
    const debt = await seedDebt(tenant);
    const promise = await promiseFor(tenant, debt);
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.debt.update({ where: { id: debt.id }, data: { state: 'paid' } }));
    expect((await patch(tenant, promise.id, { status: 'kept' })).status).toBe(200);
    expect(await debtState(tenant, debt.id)).toBe('paid');
  });

  it.each([
    ['status pending', { status: 'pending' }],
    ['an unknown status', { status: 'paid' }],
    ['status missing', {}],
    ['status null', { status: null }],
    ['an unknown key', { status: 'kept', amount_cents: 1 }],
    ['an array body', ['kept']],
  ])('is 400 bad_request for %s, changing nothing', async (_name, body) => {
    const debt = await seedDebt(tenant);
    const promise = await promiseFor(tenant, debt);
    expectError(await patch(tenant, promise.id, body), 400, 'bad_request');
    const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.paymentPromise.findUniqueOrThrow({ where: { id: promise.id } }));
    expect(stored.status).toBe('pending');
  });

  it('names the unknown key', async () => {
    const debt = await seedDebt(tenant);
    const promise = await promiseFor(tenant, debt);
    expect((await patch(tenant, promise.id, { status: 'kept', colour: 'red' })).body.error.message).toMatch(/colour/);
  });

  it('is 404 for an unknown, a malformed and a foreign promise', async () => {
    const other = await provisionTenant(app);
    const foreignDebt = await seedDebt(other);
    const foreign = await promiseFor(other, foreignDebt);
    expectError(await patch(tenant, randomUUID(), { status: 'kept' }), 404, 'not_found');
    expectError(await patch(tenant, 'p-1', { status: 'kept' }), 404, 'not_found');
    expectError(await patch(tenant, foreign.id, { status: 'kept' }), 404, 'not_found');
    const stored = await withTenant(app.deps.db, other.tenantId, (tx) => tx.paymentPromise.findUniqueOrThrow({ where: { id: foreign.id } }));
    expect(stored.status).toBe('pending');
  });

  it('is 415 for a body that is not JSON and 413 for one over 8 MiB', async () => {
    const debt = await seedDebt(tenant);
    const promise = await promiseFor(tenant, debt);
    const res = await app.request('PATCH', `/v1/promises/${promise.id}`, { token: tenant.apiKey, rawBody: 'status=kept', headers: { 'content-type': 'text/plain' } });
    expectError(res, 415, 'unsupported_media_type');
    const big = { 'content-type': 'application/json', 'content-length': String(9 * 1024 * 1024) };
    expectError(await app.request('PATCH', `/v1/promises/${promise.id}`, { token: tenant.apiKey, headers: big }), 413, 'payload_too_large');
  });
});

describe('promise routes: credentials', () => {
  it('take dd_ and ddu_; none or a bad one is 401, a suspended tenant 403', async () => {
    const tenant = await provisionTenant(app);
    const debt = await seedDebt(tenant);
    const promise = await promiseFor(tenant, debt);
    const session = await createUserSession(app, tenant);
    expect((await app.request('GET', '/v1/promises', { token: session.token })).body.promises).toHaveLength(1);
    const routes: [string, string, unknown][] = [
      ['GET', '/v1/promises', undefined],
      ['PATCH', `/v1/promises/${promise.id}`, { status: 'kept' }],
    ];
    for (const [method, path, body] of routes) {
      expectError(await app.request(method, path, { body }), 401, 'unauthorized');
      expectError(await app.request(method, path, { body, token: 'ddu_nope' }), 401, 'unauthorized');
    }
    await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
    for (const [method, path, body] of routes) expectError(await app.request(method, path, { body, token: tenant.apiKey }), 403, 'forbidden');
    await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/reactivate`, { token: ADMIN_TOKEN });
    const bySession = await patch(tenant, promise.id, { status: 'cancelled' }, session.token);
    expect(bySession.status).toBe(200);
    const audit = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findFirstOrThrow({ where: { action: 'promise.cancelled', subjectId: debt.id } }));
    expect(audit).toMatchObject({ actorType: 'user', actorId: session.userId });
  });
});
