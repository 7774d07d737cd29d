import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import type { CallAttempt, Prisma } from '../../prisma/generated/client';
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
import { CALL_ATTEMPT_FIELDS } from '../helpers/spec-fields';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

let phoneSeq = 0;
const nextPhone = () => `+1303555${String(1000 + (++phoneSeq % 9000)).padStart(4, '0')}`;

const BASE = Date.parse('2026-11-01T15:00:00.000Z');
/** A fixed instant `s` seconds after BASE. */
const at = (s: number) => new Date(BASE + s * 1000);

interface Debt {
  id: string;
  phone: string;
  externalRef: string;
}

async function seedDebt(tenant: ProvisionedTenant, campaignId: string | null = null): Promise<Debt> {
  const phone = nextPhone();
  const externalRef = `ext-${randomUUID()}`;
  const id = await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const debt = await tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef, consumerRef: 'cons', campaignId } });
    await tx.debtContact.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, isPrimary: true } });
    return debt.id;
  });
  return { id, phone, externalRef };
}

async function seedCampaign(tenant: ProvisionedTenant): Promise<string> {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => (await tx.campaign.create({ data: { tenantId: tenant.tenantId, name: `c-${randomUUID()}` } })).id);
}

async function seedAgent(tenant: ProvisionedTenant): Promise<string> {
  return withTenant(
    app.deps.db,
    tenant.tenantId,
    async (tx) => (await tx.agent.create({ data: { tenantId: tenant.tenantId, name: 'Agent', email: `a-${randomUUID()}@example.com` } })).id,
  );
}

type AttemptData = Partial<Omit<Prisma.CallAttemptUncheckedCreateInput, 'tenantId' | 'debtId'>>;

async function seedAttempt(tenant: ProvisionedTenant, debt: Debt, data: AttemptData = {}): Promise<CallAttempt> {
  return withTenant(app.deps.db, tenant.tenantId, (tx) =>
    tx.callAttempt.create({
      data: { tenantId: tenant.tenantId, debtId: debt.id, consumerRef: 'cons', debtKey: debt.externalRef, toNumber: debt.phone, ...data },
    }),
  );
}

const get = (tenant: ProvisionedTenant, path: string) => app.request('GET', path, { token: tenant.apiKey });
const ids = (res: HttpResult, key: string) => (res.body[key] as { id: string }[]).map((r) => r.id);

/** Walks every page of `path` (which has no query of its own beyond `query`) with `limit`. */
async function walk(tenant: ProvisionedTenant, path: string, key: string, query: string, limit: number): Promise<{ seen: string[]; pages: number }> {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = query ? '&' : '';
    const res: HttpResult = await get(tenant, `${path}?${query}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    expect(res.body[key].length).toBeLessThanOrEqual(limit);
    seen.push(...ids(res, key));
    cursor = res.body.next_cursor;
    pages += 1;
  } while (cursor && pages < 50);
  return { seen, pages };
}

/**
 * A tenant with a known CDR: three originals of two debts (two campaigns, an agent), a live one,
 * and two corrections of the first original, one with an encrypted note.
 */
interface Fixture {
  tenant: ProvisionedTenant;
  campaignA: string;
  campaignB: string;
  agent: string;
  debtA: Debt;
  debtB: Debt;
  rows: Record<'first' | 'second' | 'live' | 'fix1' | 'fix2', CallAttempt>;
}

async function fixture(): Promise<Fixture> {
  const tenant = await provisionTenant(app);
  const campaignA = await seedCampaign(tenant);
  const campaignB = await seedCampaign(tenant);
  const agent = await seedAgent(tenant);
  const debtA = await seedDebt(tenant, campaignA);
  const debtB = await seedDebt(tenant, campaignB);
  const snapshot = { decision_id: randomUUID(), policy_version: 2 };
  const first = await seedAttempt(tenant, debtA, {
    campaignId: campaignA,
    callUuid: randomUUID(),
    fromNumber: '+12125550000',
    startedAt: at(0),
    answeredAt: at(4),
    endedAt: at(60),
    disposition: 'answered_human',
    hangupCause: 'NORMAL_CLEARING',
    sipResponseCode: 200,
    complianceSnapshot: snapshot,
    amdVerdict: 'human',
    recordingUri: 'recordings/first.wav',
    insertedAt: at(0),
  });
  const second = await seedAttempt(tenant, debtB, {
    campaignId: campaignB,
    agentId: agent,
    callUuid: randomUUID(),
    startedAt: at(100),
    endedAt: at(130),
    disposition: 'busy',
    sipResponseCode: 486,
    insertedAt: at(100),
  });
  const live = await seedAttempt(tenant, debtB, { campaignId: campaignB, callUuid: randomUUID(), startedAt: at(200), insertedAt: at(200), aiUsed: true });
  const correction = (s: number, disposition: string, note: string | null) =>
    seedAttempt(tenant, debtA, {
      campaignId: campaignA,
      agentId: agent,
      callUuid: first.callUuid,
      startedAt: first.startedAt,
      disposition,
      correctsId: first.id,
      noteCiphertext: note === null ? null : app.deps.box.encrypt(note),
      insertedAt: at(s),
    });
  const fix1 = await correction(300, 'wrong_number', null);
  const fix2 = await correction(400, 'promise_to_pay', 'will pay on Friday');
  return { tenant, campaignA, campaignB, agent, debtA, debtB, rows: { first, second, live, fix1, fix2 } };
}

describe('GET /v1/call_attempts', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });
  const list = (query = '') => get(f.tenant, `/v1/call_attempts${query ? `?${query}` : ''}`);

  it('lists every row, originals and corrections, newest first, with the note decrypted', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['call_attempts', 'next_cursor']);
    expect(res.body.next_cursor).toBeNull();
    const { first, second, live, fix1, fix2 } = f.rows;
    expect(ids(res, 'call_attempts')).toEqual([fix2.id, fix1.id, live.id, second.id, first.id]);
    for (const row of res.body.call_attempts) expect(Object.keys(row).sort()).toEqual(CALL_ATTEMPT_FIELDS);
    expect(res.body.call_attempts[4]).toEqual({
      id: first.id,
      tenant_id: f.tenant.tenantId,
      debt_id: f.debtA.id,
      direction: 'outbound',
      campaign_id: f.campaignA,
      agent_id: null,
      consumer_ref: 'cons',
      debt_key: f.debtA.externalRef,
      call_uuid: first.callUuid,
      from_number: '+12125550000',
      to_number: f.debtA.phone,
      started_at: '2026-11-01T15:00:00.000Z',
      answered_at: '2026-11-01T15:00:04.000Z',
      ended_at: '2026-11-01T15:01:00.000Z',
      disposition: 'answered_human',
      hangup_cause: 'NORMAL_CLEARING',
      sip_response_code: 200,
      compliance_snapshot: first.complianceSnapshot,
      amd_verdict: 'human',
      recording_uri: 'recordings/first.wav',
      ai_used: false,
      note: null,
      corrects_id: null,
      inserted_at: '2026-11-01T15:00:00.000Z',
    });
    expect(res.body.call_attempts[0]).toMatchObject({ corrects_id: first.id, disposition: 'promise_to_pay', note: 'will pay on Friday' });
    expect(res.body.call_attempts[1]).toMatchObject({ corrects_id: first.id, disposition: 'wrong_number', note: null });
    expect(res.text).not.toContain(fix2.noteCiphertext!);
  });

  it.each([
    ['campaign_id', (x: Fixture) => `campaign_id=${x.campaignA}`, (x: Fixture) => [x.rows.fix2, x.rows.fix1, x.rows.first]],
    ['debt_id', (x: Fixture) => `debt_id=${x.debtB.id}`, (x: Fixture) => [x.rows.live, x.rows.second]],
    ['agent_id', (x: Fixture) => `agent_id=${x.agent}`, (x: Fixture) => [x.rows.fix2, x.rows.fix1, x.rows.second]],
    ['disposition (exact)', () => 'disposition=busy', (x: Fixture) => [x.rows.second]],
    ['disposition of corrections', () => 'disposition=promise_to_pay', (x: Fixture) => [x.rows.fix2]],
    ['from (inclusive)', () => `from=${at(200).toISOString()}`, (x: Fixture) => [x.rows.fix2, x.rows.fix1, x.rows.live]],
    ['to (exclusive)', () => `to=${at(200).toISOString()}`, (x: Fixture) => [x.rows.second, x.rows.first]],
    ['from and to with an offset', () => `from=${encodeURIComponent('2026-11-01T10:01:40-05:00')}&to=${encodeURIComponent('2026-11-01T20:35:01+05:30')}`, (x: Fixture) => [x.rows.fix1, x.rows.live, x.rows.second]],
    ['filters combined', (x: Fixture) => `agent_id=${x.agent}&debt_id=${x.debtA.id}&from=${at(350).toISOString()}`, (x: Fixture) => [x.rows.fix2]],
  ])('filters by %s', async (_name, query, expected) => {
    const res = await list(query(f));
    expect(res.status).toBe(200);
    expect(ids(res, 'call_attempts')).toEqual(expected(f).map((r) => r.id));
  });

  it('answers zero rows for an unknown disposition (case-sensitive) and for ids that match nothing', async () => {
    for (const query of ['disposition=no_such_code', 'disposition=BUSY', 'disposition=bu', `debt_id=${randomUUID()}`, `campaign_id=${randomUUID()}`, `agent_id=${randomUUID()}`]) {
      const res = await list(query);
      expect({ query, status: res.status, body: res.body }).toEqual({ query, status: 200, body: { call_attempts: [], next_cursor: null } });
    }
  });

  it.each([
    'disposition=',
    'disposition=busy&disposition=no_answer',
    'disposition=busy&disposition=busy',
    'disposition[]=busy',
    'disposition[0]=busy',
    'campaign_id=nope',
    'debt_id=123',
    'agent_id=',
    `debt_id=${randomUUID()}&debt_id=${randomUUID()}`,
    'from=2026-11-01',
    'from=2026-11-01T15:00:00',
    'from=yesterday',
    'to=2026-13-01T00:00:00Z',
    'limit=0',
    'limit=1001',
    'limit=-1',
    'limit=abc',
    'limit=',
    'cursor=zzz',
    `cursor=${Buffer.from(JSON.stringify(['not a time', randomUUID()])).toString('base64url')}`,
  ])('rejects %s with 400 bad_request', async (query) => {
    expectError(await list(query), 400, 'bad_request');
  });

  it('answers from after to with 422 unprocessable (a rule across two parameters)', async () => {
    expectError(await list(`from=${at(10).toISOString()}&to=${at(5).toISOString()}`), 422, 'unprocessable');
  });

  it('accepts limit=1000 and a from equal to to (an empty window)', async () => {
    expect((await list('limit=1000')).body.call_attempts).toHaveLength(5);
    const empty = await list(`from=${at(100).toISOString()}&to=${at(100).toISOString()}`);
    expect(empty.status).toBe(200);
    expect(empty.body.call_attempts).toEqual([]);
  });

  it('pages newest first without gaps or repeats, also through rows inserted at the same instant', async () => {
    const tenant = await provisionTenant(app);
    const debt = await seedDebt(tenant);
    const created: CallAttempt[] = [];
    for (let i = 0; i < 7; i += 1) created.push(await seedAttempt(tenant, debt, { insertedAt: at(Math.floor(i / 2)), disposition: 'no_answer' }));
    const expected = [...created].sort((a, b) => b.insertedAt.getTime() - a.insertedAt.getTime() || (a.id < b.id ? 1 : -1)).map((r) => r.id);
    const all = await get(tenant, '/v1/call_attempts');
    expect(ids(all, 'call_attempts')).toEqual(expected);
    for (const limit of [1, 2, 3, 7]) {
      const { seen, pages } = await walk(tenant, '/v1/call_attempts', 'call_attempts', '', limit);
      expect(seen).toEqual(expected);
      expect(pages).toBe(Math.ceil(7 / limit));
    }
    // The cursor keeps the filters of the query it is used with.
    const first = await get(tenant, `/v1/call_attempts?limit=2&debt_id=${debt.id}`);
    const rest = await get(tenant, `/v1/call_attempts?limit=10&debt_id=${debt.id}&cursor=${first.body.next_cursor}`);
    expect([...ids(first, 'call_attempts'), ...ids(rest, 'call_attempts')]).toEqual(expected);
    expect(rest.body.next_cursor).toBeNull();
  });

  it('reads a page with one SQL statement in its tenant transaction', async () => {
    const statements = await captureTenantStatements(() => list(`limit=2&debt_id=${f.debtA.id}`));
    expect(statements.filter((s) => !/^(BEGIN|COMMIT)/.test(s.trim()))).toHaveLength(1);
    expect(statements.some((s) => /FROM call_attempts/.test(s))).toBe(true);
  });

  it("never shows another tenant's rows", async () => {
    const other = await provisionTenant(app);
    const res = await get(other, '/v1/call_attempts');
    expect(res.body).toEqual({ call_attempts: [], next_cursor: null });
    expect((await get(other, `/v1/call_attempts?debt_id=${f.debtA.id}`)).body.call_attempts).toEqual([]);
  });
});

describe('GET /v1/calls', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });
  const list = (query = '') => get(f.tenant, `/v1/calls${query ? `?${query}` : ''}`);

  it('lists the original rows only, newest first', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['calls', 'next_cursor']);
    expect(ids(res, 'calls')).toEqual([f.rows.live.id, f.rows.second.id, f.rows.first.id]);
    for (const row of res.body.calls) {
      expect(Object.keys(row).sort()).toEqual(CALL_ATTEMPT_FIELDS);
      expect(row.corrects_id).toBeNull();
    }
    // The original keeps its own disposition; corrections are not calls.
    expect(res.body.calls[2]).toMatchObject({ id: f.rows.first.id, disposition: 'answered_human' });
  });

  it.each([
    ['live=true (not ended)', () => 'live=true', (x: Fixture) => [x.rows.live]],
    ['live=false (ended)', () => 'live=false', (x: Fixture) => [x.rows.second, x.rows.first]],
    ['campaign_id', (x: Fixture) => `campaign_id=${x.campaignB}`, (x: Fixture) => [x.rows.live, x.rows.second]],
    ['debt_id', (x: Fixture) => `debt_id=${x.debtA.id}`, (x: Fixture) => [x.rows.first]],
    ['agent_id (corrections excluded)', (x: Fixture) => `agent_id=${x.agent}`, (x: Fixture) => [x.rows.second]],
    ['disposition of the original', () => 'disposition=answered_human', (x: Fixture) => [x.rows.first]],
    ['from and to', () => `from=${at(50).toISOString()}&to=${at(300).toISOString()}`, (x: Fixture) => [x.rows.live, x.rows.second]],
    ['live and campaign', (x: Fixture) => `live=false&campaign_id=${x.campaignB}`, (x: Fixture) => [x.rows.second]],
  ])('filters by %s', async (_name, query, expected) => {
    const res = await list(query(f));
    expect(res.status).toBe(200);
    expect(ids(res, 'calls')).toEqual(expected(f).map((r) => r.id));
  });

  it('answers zero rows for a disposition only a correction has, and for an unknown one', async () => {
    expect((await list('disposition=promise_to_pay')).body).toEqual({ calls: [], next_cursor: null });
    expect((await list('disposition=nothing_like_it')).body).toEqual({ calls: [], next_cursor: null });
  });

  it.each([
    'live=yes',
    'live=1',
    'live=TRUE',
    'live=',
    'live=true&live=false',
    'live[]=true',
    'disposition=',
    'disposition=a&disposition=b',
    'disposition[]=a',
    'campaign_id=x',
    'agent_id=x',
    'debt_id=x',
    'from=2026-11-01',
    'to=later',
    'limit=1001',
    'limit=0',
    'cursor=%%%',
  ])('rejects %s with 400 bad_request', async (query) => {
    expectError(await list(query), 400, 'bad_request');
  });

  it('answers from after to with 422 unprocessable (a rule across two parameters)', async () => {
    expectError(await list(`from=${at(10).toISOString()}&to=${at(5).toISOString()}`), 422, 'unprocessable');
  });

  it('pages through originals only', async () => {
    const { seen, pages } = await walk(f.tenant, '/v1/calls', 'calls', '', 1);
    expect(seen).toEqual([f.rows.live.id, f.rows.second.id, f.rows.first.id]);
    expect(pages).toBe(3);
    expect((await list('limit=1000')).status).toBe(200);
  });

  it("never shows another tenant's calls", async () => {
    const other = await provisionTenant(app);
    expect((await get(other, '/v1/calls')).body).toEqual({ calls: [], next_cursor: null });
  });
});

describe('GET /v1/calls/{call_id}', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });

  it('answers the original row by its switch call uuid, never a correction that shares it', async () => {
    const res = await get(f.tenant, `/v1/calls/${f.rows.first.callUuid}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['call', 'timeline']);
    expect(Array.isArray(res.body.timeline)).toBe(true);
    expect(Object.keys(res.body.call).sort()).toEqual(CALL_ATTEMPT_FIELDS);
    expect(res.body.call).toMatchObject({ id: f.rows.first.id, corrects_id: null, disposition: 'answered_human', call_uuid: f.rows.first.callUuid });
    const live = await get(f.tenant, `/v1/calls/${f.rows.live.callUuid}`);
    expect(live.body.call).toMatchObject({ id: f.rows.live.id, ended_at: null, ai_used: true });
  });

  it('takes any switch call id string, not only uuids', async () => {
    const debt = await seedDebt(f.tenant);
    const row = await seedAttempt(f.tenant, debt, { callUuid: 'sim-call-0042' });
    expect((await get(f.tenant, '/v1/calls/sim-call-0042')).body.call.id).toBe(row.id);
  });

  it('is 404 for an unknown call, a row id instead of the call uuid, and a foreign call', async () => {
    expectError(await get(f.tenant, `/v1/calls/${randomUUID()}`), 404, 'not_found');
    expectError(await get(f.tenant, '/v1/calls/not-a-call'), 404, 'not_found');
    expectError(await get(f.tenant, `/v1/calls/${f.rows.first.id}`), 404, 'not_found');
    const other = await provisionTenant(app);
    expectError(await get(other, `/v1/calls/${f.rows.first.callUuid}`), 404, 'not_found');
  });
});

describe('CDR read routes: credentials', () => {
  it('take dd_ and ddu_ credentials; none or a bad one is 401, a suspended tenant 403', async () => {
    const f = await fixture();
    const session = await createUserSession(app, f.tenant);
    const paths = ['/v1/call_attempts', '/v1/calls', `/v1/calls/${f.rows.first.callUuid}`];
    for (const path of paths) {
      expect((await app.request('GET', path, { token: f.tenant.apiKey })).status).toBe(200);
      expect((await app.request('GET', path, { token: session.token })).status).toBe(200);
      expectError(await app.request('GET', path), 401, 'unauthorized');
      expectError(await app.request('GET', path, { token: 'dd_not_a_real_key' }), 401, 'unauthorized');
    }
    const suspended = await app.request('POST', `/v1/admin/tenants/${f.tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
    expect(suspended.status).toBe(200);
    for (const path of paths) expectError(await app.request('GET', path, { token: f.tenant.apiKey }), 403, 'forbidden');
  });
});

/**
 * The statements the tenant transactions (withTenantSql) send while `work` runs. Credential
 * lookups go through pool.query and are not counted.
 */
async function captureTenantStatements(work: () => Promise<unknown>): Promise<string[]> {
  const pool = app.deps.db.pool;
  const statements: string[] = [];
  const original = pool.connect.bind(pool) as () => Promise<PoolClient>;
  const spy = jest.spyOn(pool, 'connect').mockImplementation(((...args: unknown[]) => {
    if (args.length > 0) return (original as (...a: unknown[]) => unknown)(...args);
    return original().then((client) => {
      const query = client.query.bind(client) as (...a: unknown[]) => unknown;
      const release = client.release.bind(client);
      client.query = ((...a: unknown[]) => {
        const first = a[0];
        statements.push(typeof first === 'string' ? first : String((first as { text?: string }).text));
        return query(...a);
      }) as typeof client.query;
      client.release = (err?: boolean | Error) => {
        client.query = query as typeof client.query;
        client.release = release;
        release(err);
      };
      return client;
    });
  }) as typeof pool.connect);
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return statements;
}
