import { randomUUID } from 'node:crypto';
import type { Callback } from '../../prisma/generated/client';
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

const CALLBACK_FIELDS = [
  'id',
  'tenant_id',
  'debt_id',
  'contact_phone',
  'campaign_id',
  'agent_id',
  'scheduled_at',
  'note',
  'priority',
  'status',
  'created_at',
  'updated_at',
].sort();
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

let phoneSeq = 0;
const nextPhone = () => `+1303557${String(1000 + (++phoneSeq % 9000)).padStart(4, '0')}`;
/** A whole-second instant `ms` from now, in RFC 3339. */
const fromNow = (ms: number) => new Date(Math.floor((Date.now() + ms) / 1000) * 1000).toISOString();

interface Debt {
  id: string;
  phones: string[];
  campaignId: string | null;
}

async function seedCampaign(tenant: ProvisionedTenant): Promise<string> {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => (await tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `c-${randomUUID()}` } })).id);
}

async function seedDebt(tenant: ProvisionedTenant, campaignId: string | null = null, contacts = 2): Promise<Debt> {
  const phones = Array.from({ length: contacts }, nextPhone);
  const id = await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const debt = await tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef: `ext-${randomUUID()}`, consumerRef: 'cons', campaignId } });
    for (const [i, phone] of phones.entries()) {
      await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, isPrimary: i === 0 } });
    }
    return debt.id;
  });
  return { id, phones, campaignId };
}

async function seedAgent(tenant: ProvisionedTenant): Promise<string> {
  return withTenant(
    app.deps.db,
    tenant.tenantId,
    async (tx) => (await tx.agent.create({ data: { tenantId: tenant.tenantId, name: 'Agent', email: `a-${randomUUID()}@example.com` } })).id,
  );
}

/** A callback written directly (the API refuses times less than 10 minutes ahead). */
async function seedCallback(tenant: ProvisionedTenant, debt: Debt, data: Partial<Omit<Callback, 'id' | 'tenantId' | 'debtId'>>): Promise<Callback> {
  return withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.callback.create({
      data: { tenantId: tenant.tenantId, debtId: debt.id, contactPhone: debt.phones[0]!, scheduledAt: new Date(Date.now() + HOUR), ...data },
    }),
  );
}

const create = (tenant: ProvisionedTenant, body: unknown, token = tenant.apiKey) => app.request('POST', '/v1/callbacks', { token, body });
const list = (tenant: ProvisionedTenant, query = '') => app.request('GET', `/v1/callbacks${query ? `?${query}` : ''}`, { token: tenant.apiKey });
const act = (tenant: ProvisionedTenant, id: string, verb: string, token = tenant.apiKey) => app.request('POST', `/v1/callbacks/${id}/${verb}`, { token });
const ids = (res: HttpResult) => (res.body.callbacks as { id: string }[]).map((c) => c.id);

const auditOf = (tenant: ProvisionedTenant, debtId: string) =>
  withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.auditLog.findMany({ where: { subjectType: 'debt', subjectId: debtId, action: { startsWith: 'callback.' } }, orderBy: { seq: 'asc' } }),
  );
const countCallbacks = (tenant: ProvisionedTenant) => withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callback.count());

describe('POST /v1/callbacks', () => {
  let tenant: ProvisionedTenant;
  let campaignId: string;
  let debt: Debt;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
    campaignId = await seedCampaign(tenant);
    debt = await seedDebt(tenant, campaignId);
  });

  it("schedules a pending callback with the debt's campaign and priority 0 by default, audited", async () => {
    const scheduledAt = fromNow(2 * HOUR);
    const res = await create(tenant, { debt_id: debt.id, contact_phone: debt.phones[1], scheduled_at: scheduledAt });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['callback']);
    expect(Object.keys(res.body.callback).sort()).toEqual(CALLBACK_FIELDS);
    expect(res.body.callback).toEqual({
      id: expect.stringMatching(UUID_RE),
      tenant_id: tenant.tenantId,
      debt_id: debt.id,
      contact_phone: debt.phones[1],
      campaign_id: campaignId,
      agent_id: null,
      scheduled_at: scheduledAt,
      note: null,
      priority: 0,
      status: 'pending',
      created_at: expect.stringMatching(ISO_RE),
      updated_at: expect.stringMatching(ISO_RE),
    });
    const audit = await auditOf(tenant, debt.id);
    expect(audit.map((a) => a.action)).toEqual(['callback.scheduled']);
    expect(audit[0]!.payload).toMatchObject({ callback_id: res.body.callback.id, scheduled_at: scheduledAt, campaign_id: campaignId, priority: 0 });
  });

  it('takes every optional field; an offset timestamp is stored in UTC; campaign_id null means none', async () => {
    const agentId = await seedAgent(tenant);
    const otherCampaign = await seedCampaign(tenant);
    const local = new Date(Math.floor((Date.now() + 3 * HOUR) / 1000) * 1000);
    const withOffset = `${new Date(local.getTime() - 6 * HOUR).toISOString().slice(0, 19)}-06:00`;
    const res = await create(tenant, {
      debt_id: debt.id,
      contact_phone: debt.phones[0],
      scheduled_at: withOffset,
      campaign_id: otherCampaign,
      agent_id: agentId,
      note: 'asked for a call after lunch',
      priority: 7,
    });
    expect(res.status).toBe(201);
    expect(res.body.callback).toMatchObject({
      campaign_id: otherCampaign,
      agent_id: agentId,
      note: 'asked for a call after lunch',
      priority: 7,
      scheduled_at: local.toISOString(),
    });
    const none = await create(tenant, { debt_id: debt.id, contact_phone: debt.phones[0], scheduled_at: fromNow(HOUR), campaign_id: null, agent_id: null, note: null, priority: -3 });
    expect(none.status).toBe(201);
    expect(none.body.callback).toMatchObject({ campaign_id: null, agent_id: null, note: null, priority: -3 });
  });

  it('accepts a time just over 10 minutes ahead and refuses one just under it with 422', async () => {
    expect((await create(tenant, { debt_id: debt.id, contact_phone: debt.phones[0], scheduled_at: new Date(Date.now() + 10 * MINUTE + 30_000).toISOString() })).status).toBe(201);
    const before = await countCallbacks(tenant);
    for (const ms of [10 * MINUTE - 30_000, 0, -HOUR]) {
      expectError(await create(tenant, { debt_id: debt.id, contact_phone: debt.phones[0], scheduled_at: new Date(Date.now() + ms).toISOString() }), 422, 'unprocessable');
    }
    expect(await countCallbacks(tenant)).toBe(before);
  });

  it('is 422 when contact_phone is not a contact of the debt (even a contact of another debt)', async () => {
    const otherDebt = await seedDebt(tenant);
    const before = await countCallbacks(tenant);
    for (const phone of [nextPhone(), otherDebt.phones[0]]) {
      const res = await create(tenant, { debt_id: debt.id, contact_phone: phone, scheduled_at: fromNow(HOUR) });
      expectError(res, 422, 'unprocessable');
      expect(res.body.error.message).toMatch(/not a contact/);
    }
    expect(await countCallbacks(tenant)).toBe(before);
  });

  it("is 422 when the number is in quarantine: a quarantined DID of the tenant or an active do-not-call listing", async () => {
    const held = await seedDebt(tenant, null, 4);
    const [didQuarantined, didActive, dncListed, dncLifted] = held.phones as [string, string, string, string];
    await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
      await tx.did.create({ data: { tenantId: tenant.tenantId, e164: didQuarantined, status: 'quarantine' } });
      await tx.did.create({ data: { tenantId: tenant.tenantId, e164: didActive, status: 'active' } });
      await tx.dncEntry.create({ data: { tenantId: tenant.tenantId, phoneE164: dncListed, source: 'api' } });
      await tx.dncEntry.create({ data: { tenantId: tenant.tenantId, phoneE164: dncLifted, source: 'optout_keyword', removedAt: new Date(), removedSource: 'start_keyword' } });
    });
    const before = await countCallbacks(tenant);
    const quarantined = await create(tenant, { debt_id: held.id, contact_phone: didQuarantined, scheduled_at: fromNow(HOUR) });
    expectError(quarantined, 422, 'unprocessable');
    expect(quarantined.body.error.message).toMatch(/quarantine/);
    const listed = await create(tenant, { debt_id: held.id, contact_phone: dncListed, scheduled_at: fromNow(HOUR) });
    expectError(listed, 422, 'unprocessable');
    expect(listed.body.error.message).toMatch(/do-not-call/);
    expect(await countCallbacks(tenant)).toBe(before);
    // An active DID and a lifted listing are no hold.
    expect((await create(tenant, { debt_id: held.id, contact_phone: didActive, scheduled_at: fromNow(HOUR) })).status).toBe(201);
    expect((await create(tenant, { debt_id: held.id, contact_phone: dncLifted, scheduled_at: fromNow(HOUR) })).status).toBe(201);
    // Another tenant's quarantine does not reach this tenant.
    const other = await provisionTenant(app);
    const otherDebt = await seedDebt(other, null, 1);
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.did.create({ data: { tenantId: tenant.tenantId, e164: otherDebt.phones[0]!, status: 'quarantine' } }));
    expect((await create(other, { debt_id: otherDebt.id, contact_phone: otherDebt.phones[0], scheduled_at: fromNow(HOUR) })).status).toBe(201);
  });

  it('is 404 for an unknown, a malformed and a foreign debt', async () => {
    const other = await provisionTenant(app);
    const foreign = await seedDebt(other);
    for (const debtId of [randomUUID(), 'debt-1', foreign.id]) {
      expectError(await create(tenant, { debt_id: debtId, contact_phone: foreign.phones[0], scheduled_at: fromNow(HOUR) }), 404, 'not_found');
    }
  });

  it('is 400 invalid for an agent or a campaign that is not of this tenant', async () => {
    const other = await provisionTenant(app);
    const otherCampaign = await seedCampaign(other);
    const base = { debt_id: debt.id, contact_phone: debt.phones[0], scheduled_at: fromNow(HOUR) };
    for (const extra of [{ agent_id: randomUUID() }, { agent_id: other.adminAgentId }, { campaign_id: randomUUID() }, { campaign_id: otherCampaign }]) {
      expectError(await create(tenant, { ...base, ...extra }), 400, 'invalid');
    }
  });

  it.each([
    ['debt_id missing', { debt_id: undefined }],
    ['contact_phone missing', { contact_phone: undefined }],
    ['scheduled_at missing', { scheduled_at: undefined }],
    ['scheduled_at without an offset', { scheduled_at: '2030-01-01T10:00:00' }],
    ['scheduled_at a date only', { scheduled_at: '2030-01-01' }],
    ['scheduled_at not a time', { scheduled_at: 'tomorrow' }],
    ['scheduled_at impossible', { scheduled_at: '2030-02-30T10:00:00Z' }],
    ['scheduled_at a number', { scheduled_at: 1893456000 }],
    ['contact_phone not E.164', { contact_phone: '(303) 555-1234' }],
    ['an unknown key', { colour: 'blue' }],
    ['priority not an integer', { priority: 1.5 }],
    ['priority a string', { priority: '3' }],
    ['priority beyond 32 bits', { priority: 2 ** 31 }],
    ['agent_id malformed', { agent_id: 'agent-1' }],
    ['campaign_id malformed', { campaign_id: 'c1' }],
    ['note too long', { note: 'x'.repeat(2001) }],
    ['debt_id a number', { debt_id: 5 }],
  ])('is 400 bad_request for %s', async (_name, over) => {
    const body: Record<string, unknown> = { debt_id: debt.id, contact_phone: debt.phones[0], scheduled_at: fromNow(HOUR), ...over };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    const before = await countCallbacks(tenant);
    expectError(await create(tenant, body), 400, 'bad_request');
    expect(await countCallbacks(tenant)).toBe(before);
  });

  it('is 415 for a body that is not JSON and 413 for one over 8 MiB', async () => {
    expectError(await app.request('POST', '/v1/callbacks', { token: tenant.apiKey, rawBody: 'debt_id=x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    const big = { 'content-type': 'application/json', 'content-length': String(9 * 1024 * 1024) };
    expectError(await app.request('POST', '/v1/callbacks', { token: tenant.apiKey, headers: big }), 413, 'payload_too_large');
  });

  it('names the unknown key', async () => {
    const res = await create(tenant, { debt_id: debt.id, contact_phone: debt.phones[0], scheduled_at: fromNow(HOUR), status: 'done' });
    expect(res.body.error.message).toMatch(/status/);
  });
});

describe('GET /v1/callbacks', () => {
  let tenant: ProvisionedTenant;
  let campaignA: string;
  let debtA: Debt;
  let debtB: Debt;
  let rows: Record<string, Callback>;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
    campaignA = await seedCampaign(tenant);
    debtA = await seedDebt(tenant, campaignA);
    debtB = await seedDebt(tenant);
    const ago = (ms: number) => new Date(Date.now() - ms);
    rows = {
      dueLowOld: await seedCallback(tenant, debtA, { scheduledAt: ago(3 * HOUR), priority: 0, campaignId: campaignA }),
      dueHigh: await seedCallback(tenant, debtB, { scheduledAt: ago(1 * HOUR), priority: 5 }),
      dueLowNew: await seedCallback(tenant, debtA, { scheduledAt: ago(2 * HOUR), priority: 0, campaignId: campaignA }),
      dueHighOld: await seedCallback(tenant, debtB, { scheduledAt: ago(4 * HOUR), priority: 5 }),
      future: await seedCallback(tenant, debtA, { scheduledAt: new Date(Date.now() + 5 * HOUR), priority: 9, campaignId: campaignA }),
      doneDue: await seedCallback(tenant, debtA, { scheduledAt: ago(5 * HOUR), priority: 9, status: 'done' }),
      missed: await seedCallback(tenant, debtB, { scheduledAt: ago(6 * HOUR), status: 'missed' }),
    };
  });
  const expectIds = (res: HttpResult, keys: string[]) => {
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(keys.map((k) => rows[k]!.id));
  };

  it('lists pending callbacks by scheduled_at by default, in the Callback shape', async () => {
    const res = await list(tenant);
    expect(Object.keys(res.body)).toEqual(['callbacks']);
    expectIds(res, ['dueHighOld', 'dueLowOld', 'dueLowNew', 'dueHigh', 'future']);
    for (const c of res.body.callbacks) expect(Object.keys(c).sort()).toEqual(CALLBACK_FIELDS);
    expect(res.body.callbacks[0]).toMatchObject({ status: 'pending', priority: 5, debt_id: debtB.id, scheduled_at: rows.dueHighOld!.scheduledAt.toISOString() });
  });

  it.each(['now', 'true', '1'])('due=%s: pending and due, by priority (highest first) then time', async (due) => {
    expectIds(await list(tenant, `due=${due}`), ['dueHighOld', 'dueHigh', 'dueLowOld', 'dueLowNew']);
    expectIds(await list(tenant, `due=${due}&status=pending`), ['dueHighOld', 'dueHigh', 'dueLowOld', 'dueLowNew']);
  });

  it('due=false and due=0 are the same as no due', async () => {
    expectIds(await list(tenant, 'due=false'), ['dueHighOld', 'dueLowOld', 'dueLowNew', 'dueHigh', 'future']);
    expectIds(await list(tenant, 'due=0&status=done'), ['doneDue']);
  });

  it('filters by status, campaign_id and debt_id, and limits', async () => {
    expectIds(await list(tenant, 'status=done'), ['doneDue']);
    expectIds(await list(tenant, 'status=missed'), ['missed']);
    expectIds(await list(tenant, 'status=cancelled'), []);
    expectIds(await list(tenant, `campaign_id=${campaignA}`), ['dueLowOld', 'dueLowNew', 'future']);
    expectIds(await list(tenant, `debt_id=${debtB.id}`), ['dueHighOld', 'dueHigh']);
    expectIds(await list(tenant, `debt_id=${debtB.id}&status=missed`), ['missed']);
    expectIds(await list(tenant, `due=now&campaign_id=${campaignA}`), ['dueLowOld', 'dueLowNew']);
    expectIds(await list(tenant, 'due=now&limit=2'), ['dueHighOld', 'dueHigh']);
    expectIds(await list(tenant, `debt_id=${randomUUID()}`), []);
    expect((await list(tenant, 'limit=1000')).status).toBe(200);
  });

  it.each([
    'due=yes',
    'due=',
    'due=now&due=1',
    'status=open',
    'status=',
    'campaign_id=abc',
    'debt_id=abc',
    'limit=0',
    'limit=1001',
    'limit=x',
  ])('rejects %s with 400 bad_request', async (query) => {
    expectError(await list(tenant, query), 400, 'bad_request');
  });

  it.each(['due=now&status=done', 'due=true&status=missed'])('refuses %s with 422 unprocessable: the due queue is pending callbacks only', async (query) => {
    expectError(await list(tenant, query), 422, 'unprocessable');
  });

  it("never shows another tenant's callbacks", async () => {
    const other = await provisionTenant(app);
    expect((await list(other)).body).toEqual({ callbacks: [] });
    expect((await list(other, 'due=now')).body).toEqual({ callbacks: [] });
  });
});

describe('POST /v1/callbacks/{id}/complete|cancel|miss', () => {
  let tenant: ProvisionedTenant;
  let debt: Debt;
  beforeAll(async () => {
    tenant = await provisionTenant(app);
    debt = await seedDebt(tenant);
  });

  it.each([
    ['complete', 'done'],
    ['cancel', 'cancelled'],
    ['miss', 'missed'],
  ])('%s moves pending to %s, audited; every further transition is 409', async (verb, status) => {
    const cb = await seedCallback(tenant, debt, {});
    const res = await act(tenant, cb.id, verb);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['callback']);
    expect(res.body.callback).toMatchObject({ id: cb.id, status, debt_id: debt.id });
    expect(Object.keys(res.body.callback).sort()).toEqual(CALLBACK_FIELDS);
    for (const again of ['complete', 'cancel', 'miss']) {
      const refused = await act(tenant, cb.id, again);
      expectError(refused, 409, 'conflict');
      expect(refused.body.error.message).toMatch(status);
    }
    const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callback.findUniqueOrThrow({ where: { id: cb.id } }));
    expect(stored.status).toBe(status);
    const audit = (await auditOf(tenant, debt.id)).filter((a) => (a.payload as { callback_id?: string }).callback_id === cb.id);
    expect(audit.map((a) => [a.action, a.payload])).toEqual([[`callback.${status}`, { callback_id: cb.id, from: 'pending', to: status }]]);
  });

  it('is 404 for an unknown, a malformed and a foreign callback', async () => {
    const other = await provisionTenant(app);
    const foreignDebt = await seedDebt(other);
    const foreign = await seedCallback(other, foreignDebt, {});
    for (const verb of ['complete', 'cancel', 'miss']) {
      expectError(await act(tenant, randomUUID(), verb), 404, 'not_found');
      expectError(await act(tenant, 'cb-1', verb), 404, 'not_found');
      expectError(await act(tenant, foreign.id, verb), 404, 'not_found');
    }
    const untouched = await withTenant(app.deps.db, other.tenantId, (tx) => tx.callback.findUniqueOrThrow({ where: { id: foreign.id } }));
    expect(untouched.status).toBe('pending');
  });

  it('ignores a JSON body; is 415 for another media type and 413 for a body over 8 MiB, changing nothing', async () => {
    const cb = await seedCallback(tenant, debt, {});
    const path = `/v1/callbacks/${cb.id}/cancel`;
    expectError(await app.request('POST', path, { token: tenant.apiKey, rawBody: 'x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    const big = { 'content-type': 'application/json', 'content-length': String(9 * 1024 * 1024) };
    expectError(await app.request('POST', path, { token: tenant.apiKey, headers: big }), 413, 'payload_too_large');
    const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callback.findUniqueOrThrow({ where: { id: cb.id } }));
    expect(stored.status).toBe('pending');
    const withBody = await app.request('POST', path, { token: tenant.apiKey, body: { status: 'done' } });
    expect(withBody.status).toBe(200);
    expect(withBody.body.callback.status).toBe('cancelled');
  });

  it('is 404 for an unknown verb', async () => {
    const cb = await seedCallback(tenant, debt, {});
    expectError(await act(tenant, cb.id, 'done'), 404, 'not_found');
  });
});

describe('callback routes: credentials', () => {
  it('take dd_ and ddu_; none or a bad one is 401, a suspended tenant 403', async () => {
    const tenant = await provisionTenant(app);
    const debt = await seedDebt(tenant);
    const session = await createUserSession(app, tenant);
    const byUser = await create(tenant, { debt_id: debt.id, contact_phone: debt.phones[0], scheduled_at: fromNow(HOUR) }, session.token);
    expect(byUser.status).toBe(201);
    expect((await act(tenant, byUser.body.callback.id, 'complete', session.token)).status).toBe(200);
    expect((await app.request('GET', '/v1/callbacks', { token: session.token })).status).toBe(200);
    const cb = await seedCallback(tenant, debt, {});
    const routes: [string, string, unknown][] = [
      ['GET', '/v1/callbacks', undefined],
      ['POST', '/v1/callbacks', { debt_id: debt.id, contact_phone: debt.phones[0], scheduled_at: fromNow(HOUR) }],
      ['POST', `/v1/callbacks/${cb.id}/complete`, undefined],
      ['POST', `/v1/callbacks/${cb.id}/cancel`, undefined],
      ['POST', `/v1/callbacks/${cb.id}/miss`, undefined],
    ];
    for (const [method, path, body] of routes) {
      expectError(await app.request(method, path, { body }), 401, 'unauthorized');
      expectError(await app.request(method, path, { body, token: 'dd_nope' }), 401, 'unauthorized');
    }
    await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
    for (const [method, path, body] of routes) expectError(await app.request(method, path, { body, token: tenant.apiKey }), 403, 'forbidden');
    const stored = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.callback.findUniqueOrThrow({ where: { id: cb.id } }));
    expect(stored.status).toBe('pending');
  });
});
