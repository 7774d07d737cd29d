import { createHmac, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { CallAttempt } from '../../prisma/generated/client';
import { verifyAuditChain } from '../../src/lib/audit';
import { RATE_BUDGETS, RateLimits } from '../../src/lib/rate-limit';
import { withTenant, withTenantSql } from '../../src/lib/tenancy';
import { evaluate } from '../../src/modules/compliance/compliance.service';
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
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DAY = 86_400_000;

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

/** Today (UTC) plus `days`, YYYY-MM-DD. */
const utcDay = (days: number) => new Date(Date.now() + days * DAY).toISOString().slice(0, 10);

let phoneSeq = 0;
const nextPhone = () => `+1303556${String(1000 + (++phoneSeq % 9000)).padStart(4, '0')}`;

interface Fixture {
  tenant: ProvisionedTenant;
  debtId: string;
  campaignId: string;
  agentId: string;
  original: CallAttempt;
}

async function seedAgent(tenant: ProvisionedTenant): Promise<string> {
  return withTenant(
    app.deps.db,
    tenant.tenantId,
    async (tx) => (await tx.agent.create({ data: { tenantId: tenant.tenantId, name: 'Agent', email: `a-${randomUUID()}@example.com` } })).id,
  );
}

/** A debt (in `state`) with one answered original call attempt carrying every fact. */
async function fixture(tenant?: ProvisionedTenant, state = 'open'): Promise<Fixture> {
  const t = tenant ?? (await provisionTenant(app));
  const agentId = await seedAgent(t);
  const phone = nextPhone();
  return withTenant(app.deps.db, t.tenantId, async (tx) => {
    const campaign = await tx.campaign.create({ data: { tenantId: t.tenantId, name: `c-${randomUUID()}` } });
    const debt = await tx.debt.create({ data: { tenantId: t.tenantId, externalRef: `ext-${randomUUID()}`, consumerRef: 'cons', campaignId: campaign.id, state } });
    await tx.debtContact.create({ data: { tenantId: t.tenantId, debtId: debt.id, phoneE164: phone, isPrimary: true } });
    const original = await tx.callAttempt.create({
      data: {
        tenantId: t.tenantId,
        debtId: debt.id,
        campaignId: campaign.id,
        agentId,
        consumerRef: 'cons',
        debtKey: debt.externalRef,
        callUuid: randomUUID(),
        fromNumber: '+12125550000',
        toNumber: phone,
        startedAt: new Date('2026-11-01T15:00:00Z'),
        answeredAt: new Date('2026-11-01T15:00:05Z'),
        endedAt: new Date('2026-11-01T15:02:00Z'),
        disposition: 'answered_human',
        hangupCause: 'NORMAL_CLEARING',
        sipResponseCode: 200,
        complianceSnapshot: { decision_id: randomUUID(), policy_version: 1 },
        amdVerdict: 'human',
        recordingUri: 'recordings/x.wav',
        aiUsed: true,
        insertedAt: new Date('2026-11-01T15:00:00Z'),
      },
    });
    return { tenant: t, debtId: debt.id, campaignId: campaign.id, agentId, original };
  });
}

const dispose = (tenant: ProvisionedTenant, id: string, body: unknown, token = tenant.apiKey) =>
  app.request('POST', `/v1/call_attempts/${id}/disposition`, { token, body });

const ptp = (over: Record<string, unknown> = {}) => ({ amount_cents: 12_500, currency: 'USD', promised_date: utcDay(7), note: 'first installment', ...over });

/** Everything a disposition may write for the fixture's debt. */
async function writtenFor(f: Fixture) {
  return withTenant(app.deps.db, f.tenant.tenantId, async (tx) => ({
    corrections: await tx.callAttempt.findMany({ where: { correctsId: f.original.id }, orderBy: { insertedAt: 'asc' } }),
    promises: await tx.paymentPromise.findMany({ where: { debtId: f.debtId } }),
    debtState: (await tx.debt.findUniqueOrThrow({ where: { id: f.debtId } })).state,
    audit: await tx.auditLog.findMany({ where: { action: 'call_attempt.dispositioned', subjectId: f.debtId }, orderBy: { occurredAt: 'asc' } }),
    original: await tx.callAttempt.findUniqueOrThrow({ where: { id: f.original.id } }),
  }));
}

async function expectNothingWritten(f: Fixture) {
  const w = await writtenFor(f);
  expect(w.corrections).toEqual([]);
  expect(w.promises).toEqual([]);
  expect(w.audit).toEqual([]);
  expect(w.original).toEqual(f.original);
  return w;
}

describe('POST /v1/call_attempts/{id}/disposition: the correction row', () => {
  it('appends a correction copying the original, with the new disposition; the original is untouched', async () => {
    const f = await fixture();
    const res = await dispose(f.tenant, f.original.id, { disposition: 'wrong_number' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['call_attempt', 'promise']);
    expect(res.body.promise).toBeNull();
    const o = f.original;
    const row = res.body.call_attempt;
    expect(row).toEqual({
      id: expect.stringMatching(UUID_RE),
      tenant_id: f.tenant.tenantId,
      debt_id: f.debtId,
      direction: 'outbound',
      campaign_id: f.campaignId,
      agent_id: f.agentId,
      consumer_ref: 'cons',
      debt_key: o.debtKey,
      call_uuid: o.callUuid,
      from_number: '+12125550000',
      to_number: o.toNumber,
      started_at: '2026-11-01T15:00:00.000Z',
      answered_at: '2026-11-01T15:00:05.000Z',
      ended_at: '2026-11-01T15:02:00.000Z',
      disposition: 'wrong_number',
      hangup_cause: 'NORMAL_CLEARING',
      sip_response_code: 200,
      compliance_snapshot: o.complianceSnapshot,
      amd_verdict: 'human',
      recording_uri: 'recordings/x.wav',
      ai_used: true,
      note: null,
      corrects_id: o.id,
      inserted_at: expect.stringMatching(ISO_RE),
    });
    expect(row.id).not.toBe(o.id);
    const w = await writtenFor(f);
    expect(w.original).toEqual(f.original);
    expect(w.corrections.map((c) => c.id)).toEqual([row.id]);
    expect(w.corrections[0]!.noteCiphertext).toBeNull();
    expect(w.debtState).toBe('open');
    expect(w.promises).toEqual([]);
    // The CDR lists it; the call is still the original.
    const cdr = await app.request('GET', `/v1/call_attempts?debt_id=${f.debtId}`, { token: f.tenant.apiKey });
    expect(cdr.body.call_attempts.map((r: any) => r.id)).toEqual([row.id, o.id]);
    const call = await app.request('GET', `/v1/calls/${o.callUuid}`, { token: f.tenant.apiKey });
    expect(call.body.call).toMatchObject({ id: o.id, disposition: 'answered_human' });
  });

  it('records who dispositioned: agent_id given, else the original agent; trims the code', async () => {
    const f = await fixture();
    const other = await seedAgent(f.tenant);
    const given = await dispose(f.tenant, f.original.id, { disposition: '  callback_requested ', agent_id: other });
    expect(given.status).toBe(201);
    expect(given.body.call_attempt).toMatchObject({ agent_id: other, disposition: 'callback_requested' });
    const nulled = await dispose(f.tenant, f.original.id, { disposition: 'no_answer', agent_id: null });
    expect(nulled.body.call_attempt.agent_id).toBe(f.agentId);
  });

  it('appends one row per disposition; the latest is strictly the newest', async () => {
    const f = await fixture();
    const codes = ['busy', 'no_answer', 'wrong_number', 'answered_human'];
    const made: string[] = [];
    for (const disposition of codes) made.push((await dispose(f.tenant, f.original.id, { disposition })).body.call_attempt.id);
    const w = await writtenFor(f);
    expect(w.corrections.map((c) => c.id)).toEqual(made);
    expect(w.corrections.map((c) => c.disposition)).toEqual(codes);
    for (let i = 1; i < w.corrections.length; i += 1) {
      expect(w.corrections[i]!.insertedAt.getTime()).toBeGreaterThan(w.corrections[i - 1]!.insertedAt.getTime());
    }
    // Concurrent dispositions of one call serialize: distinct, strictly ordered insertion times.
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((d) => dispose(f.tenant, f.original.id, { disposition: `concurrent_${d}` })));
    const after = await writtenFor(f);
    expect(after.corrections).toHaveLength(9);
    const times = after.corrections.map((c) => c.insertedAt.getTime());
    expect(new Set(times).size).toBe(9);
    expect(after.original).toEqual(f.original);
  });

  it('is refused by the database when anything tries to update a CDR row', async () => {
    const f = await fixture();
    const res = await dispose(f.tenant, f.original.id, { disposition: 'wrong_number', note: 'n' });
    const correctionId = res.body.call_attempt.id;
    const attempt = (text: string, values: unknown[]) => withTenantSql(app.deps.db, f.tenant.tenantId, (sql) => sql.query(text, values));
    await expect(attempt(`UPDATE call_attempts SET disposition = 'promise_to_pay' WHERE id = $1`, [f.original.id])).rejects.toThrow(/append-only/);
    await expect(attempt(`UPDATE call_attempts SET disposition = 'busy' WHERE id = $1`, [correctionId])).rejects.toThrow(/append-only/);
    await expect(attempt(`UPDATE call_attempts SET note_ciphertext = NULL WHERE id = $1`, [correctionId])).rejects.toThrow(/append-only/);
    await expect(attempt(`DELETE FROM call_attempts WHERE id = $1`, [correctionId])).rejects.toThrow();
    const w = await writtenFor(f);
    expect(w.original).toEqual(f.original);
    expect(w.corrections[0]!.disposition).toBe('wrong_number');
  });

  it('writes an audit entry about the debt, without the note', async () => {
    const f = await fixture();
    const note = `secret note ${randomUUID()}`;
    const res = await dispose(f.tenant, f.original.id, { disposition: 'wrong_number', note });
    const w = await writtenFor(f);
    expect(w.audit).toHaveLength(1);
    const entry = w.audit[0]!;
    expect(entry).toMatchObject({ actorType: 'api_key', subjectType: 'debt', subjectId: f.debtId });
    expect(entry.payload).toEqual({
      call_attempt_id: f.original.id,
      correction_id: res.body.call_attempt.id,
      disposition: 'wrong_number',
      agent_id: f.agentId,
      note_present: true,
      promise: null,
      debt_state: null,
      conversation_recorded: false,
      do_not_call: { source: 'wrong_number', listed: true, consents_revoked: 0 },
    });
    expect(JSON.stringify(entry.payload)).not.toContain(note);
    const chain = await withTenant(app.deps.db, f.tenant.tenantId, (tx) => verifyAuditChain(tx, f.tenant.tenantId));
    expect(chain.brokenAt).toBeNull();
  });
});

describe('POST /v1/call_attempts/{id}/disposition: the note', () => {
  it('is encrypted at rest on the correction row and shown decrypted in every view', async () => {
    const f = await fixture();
    const note = 'Debtor says: call after 6pm, número nuevo';
    const res = await dispose(f.tenant, f.original.id, { disposition: 'callback_requested', note });
    expect(res.status).toBe(201);
    expect(res.body.call_attempt.note).toBe(note);
    const stored = (await writtenFor(f)).corrections[0]!;
    expect(stored.noteCiphertext).toMatch(/^v2\./);
    expect(stored.noteCiphertext).not.toContain('6pm');
    expect(app.deps.box.decrypt(stored.noteCiphertext!)).toBe(note);
    // Raw table contents hold only ciphertext.
    const raw = await withTenantSql(app.deps.db, f.tenant.tenantId, (sql) =>
      sql.query<{ t: string }>(`SELECT row_to_json(a)::text AS t FROM call_attempts a WHERE a.id = $1`, [stored.id]),
    );
    expect(raw[0]!.t).not.toContain('6pm');
    for (const path of [`/v1/call_attempts?debt_id=${f.debtId}`, `/v1/debts/${f.debtId}/call_attempts`]) {
      const list = await app.request('GET', path, { token: f.tenant.apiKey });
      expect(list.body.call_attempts.find((r: any) => r.id === stored.id).note).toBe(note);
      expect(list.text).not.toContain(stored.noteCiphertext!);
    }
  });

  it('accepts null and up to 2000 characters; longer or not a string is 400', async () => {
    const f = await fixture();
    expect((await dispose(f.tenant, f.original.id, { disposition: 'x', note: null })).body.call_attempt.note).toBeNull();
    expect((await dispose(f.tenant, f.original.id, { disposition: 'x', note: 'é'.repeat(2000) })).body.call_attempt.note).toBe('é'.repeat(2000));
    expectError(await dispose(f.tenant, f.original.id, { disposition: 'x', note: 'a'.repeat(2001) }), 400, 'bad_request');
    expectError(await dispose(f.tenant, f.original.id, { disposition: 'x', note: 42 }), 400, 'bad_request');
  });
});

describe('POST /v1/call_attempts/{id}/disposition: promise_to_pay', () => {
  it('creates the promise and moves the debt to promise_to_pay in the same transaction', async () => {
    const f = await fixture();
    const res = await dispose(f.tenant, f.original.id, { disposition: 'promise_to_pay', agent_id: f.agentId, note: 'agent note', promise: ptp() });
    expect(res.status).toBe(201);
    const { call_attempt: row, promise } = res.body;
    expect(row).toMatchObject({ disposition: 'promise_to_pay', corrects_id: f.original.id, note: 'agent note' });
    expect(Object.keys(promise).sort()).toEqual(PROMISE_FIELDS);
    expect(promise).toEqual({
      id: expect.stringMatching(UUID_RE),
      debt_id: f.debtId,
      call_attempt_id: row.id,
      amount_cents: 12_500,
      currency: 'USD',
      promised_date: utcDay(7),
      note: 'first installment',
      status: 'pending',
      created_at: expect.stringMatching(ISO_RE),
      updated_at: expect.stringMatching(ISO_RE),
    });
    const w = await writtenFor(f);
    expect(w.debtState).toBe('promise_to_pay');
    expect(w.promises.map((p) => [p.id, p.callAttemptId, Number(p.amountCents), p.currency, p.promisedDate.toISOString().slice(0, 10)])).toEqual([
      [promise.id, row.id, 12_500, 'USD', utcDay(7)],
    ]);
    expect(w.audit).toHaveLength(1);
    expect(w.audit[0]!.payload).toMatchObject({
      disposition: 'promise_to_pay',
      promise: { id: promise.id, amount_cents: 12_500, currency: 'USD', promised_date: utcDay(7) },
      debt_state: { from: 'open', to: 'promise_to_pay' },
    });
    expect(JSON.stringify(w.audit[0]!.payload)).not.toContain('agent note');
    // Listed by the promises route.
    const listed = await app.request('GET', `/v1/promises?debt_id=${f.debtId}`, { token: f.tenant.apiKey });
    expect(listed.body.promises).toEqual([promise]);
  });

  it('accepts a debt in in_collection or already in promise_to_pay (a second promise keeps the state)', async () => {
    const inCollection = await fixture(undefined, 'in_collection');
    expect((await dispose(inCollection.tenant, inCollection.original.id, { disposition: 'promise_to_pay', promise: ptp({ currency: 'MXN' }) })).status).toBe(201);
    expect((await writtenFor(inCollection)).debtState).toBe('promise_to_pay');
    const second = await dispose(inCollection.tenant, inCollection.original.id, { disposition: 'promise_to_pay', promise: ptp({ promised_date: utcDay(30), note: null }) });
    expect(second.status).toBe(201);
    expect(second.body.promise).toMatchObject({ note: null, promised_date: utcDay(30), status: 'pending' });
    const w = await writtenFor(inCollection);
    expect(w.debtState).toBe('promise_to_pay');
    expect(w.promises).toHaveLength(2);
    expect(w.audit[1]!.payload).toMatchObject({ debt_state: null });
  });

  it.each(['paid', 'settled', 'disputed', 'closed'])('refuses a promise for a %s debt with 422, writing nothing', async (state) => {
    const f = await fixture(undefined, state);
    expectError(await dispose(f.tenant, f.original.id, { disposition: 'promise_to_pay', promise: ptp() }), 422, 'unprocessable');
    const w = await expectNothingWritten(f);
    expect(w.debtState).toBe(state);
  });

  it('writes nothing at all when the transaction fails after the promise insert', async () => {
    const f = await fixture();
    const owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await owner.connect();
    const suffix = randomUUID().replace(/-/g, '');
    // Fails the debt's move to promise_to_pay, and only once its promise row exists in the same
    // transaction: a 500 therefore proves the promise insert happened before the failure.
    await owner.query(`CREATE FUNCTION fail_ptp_${suffix}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.id = '${f.debtId}' AND NEW.state = 'promise_to_pay'
           AND EXISTS (SELECT 1 FROM promises WHERE debt_id = NEW.id) THEN
          RAISE EXCEPTION 'forced failure after the promise insert';
        END IF;
        RETURN NEW;
      END $$`);
    await owner.query(`CREATE TRIGGER fail_ptp_${suffix} BEFORE UPDATE ON debts FOR EACH ROW EXECUTE FUNCTION fail_ptp_${suffix}()`);
    try {
      const res = await dispose(f.tenant, f.original.id, { disposition: 'promise_to_pay', note: 'n', promise: ptp() });
      expectError(res, 500, 'internal');
    } finally {
      await owner.query(`DROP TRIGGER fail_ptp_${suffix} ON debts`);
      await owner.query(`DROP FUNCTION fail_ptp_${suffix}()`);
      await owner.end();
    }
    const w = await expectNothingWritten(f);
    expect(w.debtState).toBe('open');
    // Without the fault the same request goes through.
    expect((await dispose(f.tenant, f.original.id, { disposition: 'promise_to_pay', promise: ptp() })).status).toBe(201);
    expect((await writtenFor(f)).debtState).toBe('promise_to_pay');
  });

  it.each([
    ['promise_to_pay without a promise', { disposition: 'promise_to_pay' }],
    ['promise_to_pay with promise null', { disposition: 'promise_to_pay', promise: null }],
    ['a promise with another disposition', { disposition: 'wrong_number', promise: ptp() }],
    ['promised_date today', { disposition: 'promise_to_pay', promise: ptp({ promised_date: utcDay(0) }) }],
    ['promised_date in the past', { disposition: 'promise_to_pay', promise: ptp({ promised_date: utcDay(-3) }) }],
    ['promised_date 91 days out', { disposition: 'promise_to_pay', promise: ptp({ promised_date: utcDay(91) }) }],
  ])('is 422 unprocessable for %s, writing nothing', async (_name, body) => {
    const f = await fixture();
    expectError(await dispose(f.tenant, f.original.id, body), 422, 'unprocessable');
    await expectNothingWritten(f);
  });

  it.each([
    ['tomorrow', 1],
    ['90 days out', 90],
  ])('accepts promised_date %s', async (_name, days) => {
    const f = await fixture();
    const res = await dispose(f.tenant, f.original.id, { disposition: 'promise_to_pay', promise: ptp({ promised_date: utcDay(days) }) });
    expect(res.status).toBe(201);
    expect(res.body.promise.promised_date).toBe(utcDay(days));
  });

  it.each([
    ['an unknown key inside promise', { extra: 1 }, /promise\.extra/],
    ['amount_cents 0', { amount_cents: 0 }, /amount_cents/],
    ['amount_cents negative', { amount_cents: -5 }, /amount_cents/],
    ['amount_cents not an integer', { amount_cents: 10.5 }, /amount_cents/],
    ['amount_cents a string', { amount_cents: '100' }, /amount_cents/],
    ['amount_cents missing', { amount_cents: undefined }, /amount_cents/],
    ['currency EUR', { currency: 'EUR' }, /currency/],
    ['currency lowercase', { currency: 'usd' }, /currency/],
    ['promised_date not a calendar date', { promised_date: '2027-02-30' }, /promised_date/],
    ['promised_date a timestamp', { promised_date: `${utcDay(5)}T00:00:00Z` }, /promised_date/],
    ['promised_date missing', { promised_date: undefined }, /promised_date/],
    ['promise note too long', { note: 'x'.repeat(2001) }, /note/],
  ])('is 400 bad_request for %s, writing nothing', async (_name, over, message) => {
    const f = await fixture();
    const res = await dispose(f.tenant, f.original.id, { disposition: 'promise_to_pay', promise: ptp(over) });
    expectError(res, 400, 'bad_request');
    expect(res.body.error.message).toMatch(message);
    await expectNothingWritten(f);
  });

  it('is 400 when promise is not an object', async () => {
    const f = await fixture();
    expectError(await dispose(f.tenant, f.original.id, { disposition: 'promise_to_pay', promise: 'tomorrow' }), 400, 'bad_request');
    expectError(await dispose(f.tenant, f.original.id, { disposition: 'promise_to_pay', promise: [] }), 400, 'bad_request');
    await expectNothingWritten(f);
  });
});

describe('POST /v1/call_attempts/{id}/disposition: validation', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });

  it('ignores unknown top-level keys', async () => {
    const res = await dispose(f.tenant, f.original.id, { disposition: 'busy', colour: 'blue', tenant_id: randomUUID() });
    expect(res.status).toBe(201);
    expect(res.body.call_attempt.tenant_id).toBe(f.tenant.tenantId);
  });

  it('accepts a 64-character code', async () => {
    expect((await dispose(f.tenant, f.original.id, { disposition: 'd'.repeat(64) })).status).toBe(201);
  });

  it.each([
    ['disposition missing', {}],
    ['disposition empty', { disposition: '' }],
    ['disposition blank', { disposition: '   ' }],
    ['disposition of 65 characters', { disposition: 'd'.repeat(65) }],
    ['disposition not a string', { disposition: 7 }],
    ['disposition null', { disposition: null }],
    ['agent_id not a uuid', { disposition: 'busy', agent_id: 'agent-7' }],
    ['agent_id a number', { disposition: 'busy', agent_id: 7 }],
    ['a JSON array body', []],
    ['a JSON string body', 'busy'],
  ])('is 400 bad_request for %s', async (_name, body) => {
    expectError(await dispose(f.tenant, f.original.id, body), 400, 'bad_request');
  });

  it('is 400 bad_request for malformed JSON and 415 for another media type', async () => {
    const path = `/v1/call_attempts/${f.original.id}/disposition`;
    expectError(await app.request('POST', path, { token: f.tenant.apiKey, rawBody: '{"disposition":', headers: { 'content-type': 'application/json' } }), 400, 'bad_request');
    expectError(await app.request('POST', path, { token: f.tenant.apiKey, rawBody: 'disposition=busy', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type');
  });

  it('is 413 for a body over 8 MiB, refused before it is read', async () => {
    const res = await app.request('POST', `/v1/call_attempts/${f.original.id}/disposition`, {
      token: f.tenant.apiKey,
      headers: { 'content-type': 'application/json', 'content-length': String(9 * 1024 * 1024) },
    });
    expectError(res, 413, 'payload_too_large');
  });

  it('is 400 invalid for an agent that is not an agent of this tenant', async () => {
    const before = (await writtenFor(f)).corrections.length;
    expectError(await dispose(f.tenant, f.original.id, { disposition: 'busy', agent_id: randomUUID() }), 400, 'invalid');
    const other = await provisionTenant(app);
    expectError(await dispose(f.tenant, f.original.id, { disposition: 'busy', agent_id: other.adminAgentId }), 400, 'invalid');
    expect((await writtenFor(f)).corrections).toHaveLength(before);
  });

  it('is 404 for a correction id, an unknown, a malformed and a foreign id, appending nothing', async () => {
    const made = await dispose(f.tenant, f.original.id, { disposition: 'busy' });
    const count = (await writtenFor(f)).corrections.length;
    expectError(await dispose(f.tenant, made.body.call_attempt.id, { disposition: 'busy' }), 404, 'not_found');
    expectError(await dispose(f.tenant, randomUUID(), { disposition: 'busy' }), 404, 'not_found');
    expectError(await dispose(f.tenant, 'not-a-uuid', { disposition: 'busy' }), 404, 'not_found');
    const other = await provisionTenant(app);
    expectError(await dispose(other, f.original.id, { disposition: 'promise_to_pay', promise: ptp() }), 404, 'not_found');
    expect((await writtenFor(f)).corrections).toHaveLength(count);
  });
});

describe('POST /v1/call_attempts/{id}/disposition: rate budget', () => {
  it('answers 429 rate_limited past the tenant budget, before the lookup and without appending', async () => {
    expect(RATE_BUDGETS.dispositions.points).toBeGreaterThan(0);
    const saved = app.deps.rateLimits;
    app.deps.rateLimits = new RateLimits(app.deps.db.pool, { ...RATE_BUDGETS, dispositions: { points: 3, durationSeconds: 3600 } });
    try {
      const f = await fixture();
      for (let i = 0; i < 3; i += 1) expect((await dispose(f.tenant, f.original.id, { disposition: `d${i}` })).status).toBe(201);
      const refused = await dispose(f.tenant, f.original.id, { disposition: 'promise_to_pay', promise: ptp() });
      expectError(refused, 429, 'rate_limited');
      expect(refused.headers['retry-after']).toBeUndefined();
      // Decided before the lookup: an unknown id is 429 too, not 404.
      expectError(await dispose(f.tenant, randomUUID(), { disposition: 'busy' }), 429, 'rate_limited');
      const w = await writtenFor(f);
      expect(w.corrections).toHaveLength(3);
      expect(w.promises).toEqual([]);
      expect(w.debtState).toBe('open');
      // The budget is per tenant.
      const other = await fixture();
      expect((await dispose(other.tenant, other.original.id, { disposition: 'busy' })).status).toBe(201);
    } finally {
      app.deps.rateLimits = saved;
    }
  });
});

describe('POST /v1/call_attempts/{id}/disposition: credentials', () => {
  it('takes dd_ and ddu_; none or a bad one is 401, a suspended tenant 403', async () => {
    const f = await fixture();
    const session = await createUserSession(app, f.tenant);
    const byUser = await dispose(f.tenant, f.original.id, { disposition: 'busy' }, session.token);
    expect(byUser.status).toBe(201);
    const audit = (await writtenFor(f)).audit;
    expect(audit[0]).toMatchObject({ actorType: 'user', actorId: session.userId });
    expectError(await app.request('POST', `/v1/call_attempts/${f.original.id}/disposition`, { body: { disposition: 'busy' } }), 401, 'unauthorized');
    expectError(await dispose(f.tenant, f.original.id, { disposition: 'busy' }, 'dd_wrong'), 401, 'unauthorized');
    await app.request('POST', `/v1/admin/tenants/${f.tenant.tenantId}/suspend`, { token: ADMIN_TOKEN });
    expectError(await dispose(f.tenant, f.original.id, { disposition: 'busy' }), 403, 'forbidden');
    expect((await writtenFor(f)).corrections).toHaveLength(1);
  });
});

describe('POST /v1/call_attempts/{id}/disposition: compliance facts', () => {
  const RIGHT_PARTY = ['promise_to_pay', 'refused_to_pay', 'dispute', 'callback_requested', 'payment', 'conversation'];
  const answeredAt = new Date('2026-11-01T15:00:05Z');
  const actor = { type: 'system', id: null };

  const bodyOf = (disposition: string) => (disposition === 'promise_to_pay' ? { disposition, promise: ptp() } : { disposition });

  async function consent(f: Fixture, channel: 'voice' | 'sms', debtId = f.debtId) {
    await withTenant(app.deps.db, f.tenant.tenantId, (tx) =>
      tx.consent.create({ data: { tenantId: f.tenant.tenantId, debtId, phoneE164: f.original.toNumber, channel, source: 'import' } }),
    );
  }

  async function ledger(f: Fixture) {
    return withTenant(app.deps.db, f.tenant.tenantId, async (tx) => ({
      conversations: await tx.conversation.findMany({ where: { debtId: f.debtId }, orderBy: { recordedAt: 'asc' } }),
      debtLastConversationAt: (await tx.debt.findUniqueOrThrow({ where: { id: f.debtId } })).lastConversationAt,
    }));
  }

  async function decide(f: Fixture, now: Date, debtId = f.debtId) {
    const [d] = await evaluate(app.deps, f.tenant.tenantId, [{ debtId, phone: f.original.toNumber, channel: 'voice', campaignId: null, initiation: 'human', artificialVoice: false }], {
      actor,
      now,
    });
    return d!;
  }

  it.each(RIGHT_PARTY)('%s on an answered attempt records the conversation at the answer; the debt then rests through day 7', async (code) => {
    const f = await fixture();
    await consent(f, 'voice');
    const res = await dispose(f.tenant, f.original.id, bodyOf(code));
    expect(res.status).toBe(201);
    const { conversations, debtLastConversationAt } = await ledger(f);
    expect(conversations).toEqual([
      expect.objectContaining({ source: 'disposition', callAttemptId: f.original.id, phoneE164: f.original.toNumber, occurredAt: answeredAt }),
    ]);
    expect(conversations[0]!.evidence).toMatchObject({ correction_id: res.body.call_attempt.id, disposition: code });
    expect(debtLastConversationAt).toEqual(answeredAt);
    expect((await writtenFor(f)).audit[0]!.payload).toMatchObject({ conversation_recorded: true, do_not_call: null });

    // Day 1 is 1 November in Denver: refused through 7 November, allowed on the 8th.
    const refused = await decide(f, new Date('2026-11-07T18:00:00Z'));
    expect({ gate: refused.gate, decided: refused.decisionId !== null }).toEqual({ gate: 'regf_post_contact', decided: true });
    expect((await decide(f, new Date('2026-11-08T18:00:00Z'))).allowed).toBe(true);
  });

  it('records one conversation per call however often it is dispositioned', async () => {
    const f = await fixture();
    expect((await dispose(f.tenant, f.original.id, { disposition: 'callback_requested' })).status).toBe(201);
    expect((await dispose(f.tenant, f.original.id, { disposition: 'conversation' })).status).toBe(201);
    expect((await ledger(f)).conversations).toHaveLength(1);
    const audit = (await writtenFor(f)).audit.map((a) => (a.payload as { conversation_recorded: boolean }).conversation_recorded);
    expect(audit).toEqual([true, false]);
  });

  it('records nothing for a right-party code on an attempt nobody answered, nor for any other code', async () => {
    const f = await fixture();
    const unanswered = await withTenant(app.deps.db, f.tenant.tenantId, (tx) =>
      tx.callAttempt.create({
        data: {
          tenantId: f.tenant.tenantId,
          debtId: f.debtId,
          consumerRef: 'cons',
          debtKey: 'k',
          toNumber: f.original.toNumber,
          startedAt: new Date('2026-11-02T15:00:00Z'),
          endedAt: new Date('2026-11-02T15:00:30Z'),
          disposition: 'no_answer',
        },
      }),
    );
    for (const code of ['conversation', 'callback_requested']) expect((await dispose(f.tenant, unanswered.id, { disposition: code })).status).toBe(201);
    for (const code of ['left_message', 'answered_human', 'busy']) expect((await dispose(f.tenant, f.original.id, { disposition: code })).status).toBe(201);
    expect(await ledger(f)).toEqual({ conversations: [], debtLastConversationAt: null });
  });

  describe('listings a keyword START cannot lift', () => {
    const HMAC_SECRET = 'provider-hmac-secret';

    async function smsProvider(tenant: ProvisionedTenant): Promise<string> {
      return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
        const { accountId } = await tx.tenant.findUniqueOrThrow({ where: { id: tenant.tenantId } });
        const p = await tx.smsProvider.create({
          data: { accountId, tenantId: tenant.tenantId, adapter: 'mock', region: 'us', name: `p-${randomUUID().slice(0, 6)}`, webhookSecretCiphertext: app.deps.box.encrypt(HMAC_SECRET) },
        });
        return p.id;
      });
    }

    async function texted(providerId: string, from: string, text: string) {
      const raw = JSON.stringify({ message_id: `in-${randomUUID()}`, from, to: '+13035550100', text });
      const signature = createHmac('sha256', HMAC_SECRET).update(raw).digest('hex');
      const res = await app.request('POST', `/webhooks/sms/${providerId}/inbound`, { rawBody: raw, headers: { 'content-type': 'application/json', 'x-dd-signature': signature } });
      expect(res.status).toBe(200);
    }

    async function numberState(f: Fixture) {
      return withTenant(app.deps.db, f.tenant.tenantId, async (tx) => ({
        listed: (await tx.dncEntry.findMany({ where: { phoneE164: f.original.toNumber, removedAt: null } })).map((d) => d.source).sort(),
        consents: (await tx.consent.findMany({ where: { phoneE164: f.original.toNumber }, orderBy: [{ debtId: 'asc' }, { channel: 'asc' }] })).map((c) => ({
          debtId: c.debtId,
          channel: c.channel,
          revokedSource: c.revokedSource,
        })),
        audit: await tx.auditLog.findMany({ where: { action: 'dnc.opted_out' }, orderBy: { occurredAt: 'asc' } }),
      }));
    }

    async function otherDebtOf(f: Fixture): Promise<string> {
      return withTenant(app.deps.db, f.tenant.tenantId, async (tx) => {
        const debt = await tx.debt.create({ data: { tenantId: f.tenant.tenantId, externalRef: `ext-${randomUUID()}`, consumerRef: 'someone-else' } });
        await tx.debtContact.create({ data: { tenantId: f.tenant.tenantId, debtId: debt.id, phoneE164: f.original.toNumber, isPrimary: true } });
        return debt.id;
      });
    }

    it('wrong_number lists the number, revokes its voice and SMS consents for the debt, audited; STOP then START lifts only the keyword listing', async () => {
      const f = await fixture();
      const other = await otherDebtOf(f);
      await consent(f, 'voice');
      await consent(f, 'sms');
      await consent(f, 'voice', other);
      const res = await dispose(f.tenant, f.original.id, { disposition: 'wrong_number' });
      expect(res.status).toBe(201);

      const byDebt = (debtId: string, channel: string, revokedSource: string | null) => ({ debtId, channel, revokedSource });
      const expectedConsents = [byDebt(f.debtId, 'sms', 'wrong_number'), byDebt(f.debtId, 'voice', 'wrong_number'), byDebt(other, 'voice', null)].sort((a, b) =>
        a.debtId === b.debtId ? a.channel.localeCompare(b.channel) : a.debtId.localeCompare(b.debtId),
      );
      let s = await numberState(f);
      expect(s.listed).toEqual(['wrong_number']);
      expect(s.consents).toEqual(expectedConsents);
      expect(s.audit).toHaveLength(1);
      expect(s.audit[0]).toMatchObject({ actorType: 'api_key', subjectType: 'debt', subjectId: f.debtId });
      expect(s.audit[0]!.payload).toMatchObject({ source: 'wrong_number', channel: 'all', listed: true, consents_revoked: 2, call_attempt_id: f.original.id });
      expect((await writtenFor(f)).audit[0]!.payload).toMatchObject({ do_not_call: { source: 'wrong_number', listed: true, consents_revoked: 2 } });
      // The listing is the tenant's: no debt dials the number any more.
      expect((await decide(f, new Date('2026-11-20T18:00:00Z'), other)).gate).toBe('dnc_listed');

      const providerId = await smsProvider(f.tenant);
      await texted(providerId, f.original.toNumber, 'STOP');
      expect((await numberState(f)).listed).toEqual(['optout_keyword', 'wrong_number']);
      await texted(providerId, f.original.toNumber, 'START');
      s = await numberState(f);
      expect(s.listed).toEqual(['wrong_number']);
      expect(s.consents).toEqual(expectedConsents);
    });

    it.each(['revoked_consent', 'do_not_call'])('%s (a spoken revocation) lists the number and revokes its voice consents; START lifts nothing', async (code) => {
      const f = await fixture();
      const other = await otherDebtOf(f);
      await consent(f, 'voice');
      await consent(f, 'sms');
      await consent(f, 'voice', other);
      expect((await dispose(f.tenant, f.original.id, { disposition: code })).status).toBe(201);
      const expected = (await numberState(f)).consents.map((c) => ({ ...c, revokedSource: c.channel === 'voice' ? 'verbal_revocation' : null }));
      let s = await numberState(f);
      expect(s.listed).toEqual(['verbal_revocation']);
      expect(s.consents).toEqual(expected);
      expect(s.audit[0]!.payload).toMatchObject({ source: 'verbal_revocation', channel: 'voice', listed: true, consents_revoked: 2 });
      // A second revocation keeps the one listing.
      expect((await dispose(f.tenant, f.original.id, { disposition: code })).status).toBe(201);
      expect((await numberState(f)).listed).toEqual(['verbal_revocation']);

      await texted(await smsProvider(f.tenant), f.original.toNumber, 'START');
      s = await numberState(f);
      expect(s.listed).toEqual(['verbal_revocation']);
      expect(s.consents).toEqual(expected);
      expect((await decide(f, new Date('2026-11-20T18:00:00Z'))).gate).toBe('consent_revoked');
    });
  });
});
