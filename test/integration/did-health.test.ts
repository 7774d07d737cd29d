import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { didRoutes } from '../../src/modules/dids/did.routes';
import { ADMIN_TOKEN, provisionTenant, startTestApp, uniqueName, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { widgetRouter } from '../helpers/widget';

function expectError(res: HttpResult, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

const FROM = '2026-01-01T00:00:00.000Z';
const TO = '2026-01-31T00:00:00.000Z';
const at = (iso: string, plusMs = 0) => new Date(new Date(iso).getTime() + plusMs);

describe('GET /v1/dids/{id}/health', () => {
  let app: TestApp;
  let owner: Client;
  let tenant: ProvisionedTenant;
  let other: ProvisionedTenant;
  let didId: string;
  const E164 = '+12125557001';

  const debts = new Map<string, string>();
  const health = (t: ProvisionedTenant, id: string, query = '') => app.request('GET', `/v1/dids/${id}/health${query}`, { token: t.apiKey });

  /** One CDR row straight into call_attempts (the CDR is append-only: corrections are new rows). */
  async function cdr(t: ProvisionedTenant, row: { from?: string; startedAt: Date; answeredAt?: Date | null; endedAt?: Date | null; disposition?: string | null; correctsId?: string; insertedAt?: Date }) {
    const { rows } = await owner.query<{ id: string }>(
      `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, from_number, to_number, started_at, answered_at, ended_at,
                                  disposition, corrects_id, inserted_at)
       VALUES ($1, $2, 'cons', 'key', $3, '+13035550100', $4, $5, $6, $7, $8, coalesce($9, now())) RETURNING id`,
      [t.tenantId, debts.get(t.tenantId), row.from ?? E164, row.startedAt, row.answeredAt ?? null, row.endedAt ?? null, row.disposition ?? null, row.correctsId ?? null, row.insertedAt ?? null],
    );
    return rows[0]!.id;
  }

  beforeAll(async () => {
    app = await startTestApp();
    owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await owner.connect();
    [tenant, other] = await Promise.all([provisionTenant(app), provisionTenant(app)]);
    for (const t of [tenant, other]) {
      const ref = uniqueName('debt');
      const imported = await app.request('POST', '/v1/debts/import', {
        token: t.apiKey,
        body: { debts: [{ external_ref: ref, consumer_ref: 'cons', contacts: [{ phone_e164: '+13035550100' }] }] },
      });
      expect(imported.body).toEqual({ imported: 1, failed: [] });
      const { rows } = await owner.query<{ id: string }>('SELECT id FROM debts WHERE tenant_id = $1 AND external_ref = $2', [t.tenantId, ref]);
      debts.set(t.tenantId, rows[0]!.id);
    }
    const res = await app.request('POST', `/v1/admin/tenants/${tenant.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [E164] } });
    expect(res.status).toBe(201);
    didId = res.body.dids[0].id;

    const day = '2026-01-10T10:00:00.000Z';
    // 1: answered, 10 s: short.
    await cdr(tenant, { startedAt: at(day), answeredAt: at(day, 5_000), endedAt: at(day, 15_000), disposition: 'answered_human' });
    // 2: answered, 60 s.
    await cdr(tenant, { startedAt: at(day, 60_000), answeredAt: at(day, 65_000), endedAt: at(day, 125_000), disposition: 'answered_human' });
    // 3: never answered.
    await cdr(tenant, { startedAt: at(day, 120_000), endedAt: at(day, 150_000), disposition: 'no_answer' });
    // 4: the original knows nothing of the answer; the final state (its latest correction) says 14.999 s: short.
    const original = await cdr(tenant, { startedAt: at(day, 180_000) });
    await cdr(tenant, { startedAt: at(day, 180_000), answeredAt: at(day, 185_000), endedAt: at(day, 300_000), disposition: 'answered_human', correctsId: original, insertedAt: at('2026-01-10T11:00:00Z') });
    await cdr(tenant, { startedAt: at(day, 180_000), answeredAt: at(day, 185_000), endedAt: at(day, 199_999), disposition: 'promise_to_pay', correctsId: original, insertedAt: at('2026-01-10T12:00:00Z') });
    // 5: exactly 15 s is not short.
    await cdr(tenant, { startedAt: at(day, 240_000), answeredAt: at(day, 245_000), endedAt: at(day, 260_000), disposition: 'answered_human' });
    // 6: answered and still up: answered, not short.
    await cdr(tenant, { startedAt: at(day, 300_000), answeredAt: at(day, 305_000) });
    // Not counted: never placed, outside the period (before from, at to), another number, another tenant's CDR.
    await cdr(tenant, { startedAt: at(day, 360_000), disposition: 'not_placed' });
    await cdr(tenant, { startedAt: at(FROM, -1), answeredAt: at(FROM, 1_000), endedAt: at(FROM, 2_000), disposition: 'answered_human' });
    await cdr(tenant, { startedAt: at(TO), answeredAt: at(TO, 1_000), endedAt: at(TO, 2_000), disposition: 'answered_human' });
    await cdr(tenant, { from: '+12125557002', startedAt: at(day), answeredAt: at(day, 1_000), endedAt: at(day, 2_000) });
    await cdr(other, { startedAt: at(day), answeredAt: at(day, 1_000), endedAt: at(day, 2_000) });
  });

  afterAll(async () => {
    await owner?.end();
    await app?.close();
  });

  it('computes the figures of a known CDR exactly', async () => {
    const res = await health(tenant, didId, `?from=${FROM}&to=${TO}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      did_id: didId,
      e164: E164,
      status: 'active',
      period: { from: FROM, to: TO },
      dials: 6,
      answered: 5,
      answer_rate: 5 / 6,
      short_calls: 2,
      short_call_rate: 2 / 5,
      reputation: { hiya: null, tns: null },
    });
  });

  it('the period is half-open: a call started exactly at from counts (one at to is left out above)', async () => {
    const res = await health(tenant, didId, `?from=${at(FROM, -1).toISOString()}&to=${at(FROM, 1).toISOString()}`);
    expect(res.body).toMatchObject({ dials: 1, answered: 1, short_calls: 1, answer_rate: 1, short_call_rate: 1 });
  });

  it('rates are null when their denominator is zero', async () => {
    const res = await health(tenant, didId, '?from=2025-01-01T00:00:00Z&to=2025-02-01T00:00:00Z');
    expect(res.body).toMatchObject({ dials: 0, answered: 0, answer_rate: null, short_calls: 0, short_call_rate: null });
    const unanswered = await health(tenant, didId, `?from=${at('2026-01-10T10:00:00Z', 120_000).toISOString()}&to=${at('2026-01-10T10:00:00Z', 121_000).toISOString()}`);
    expect(unanswered.body).toMatchObject({ dials: 1, answered: 0, answer_rate: 0, short_call_rate: null });
  });

  it('defaults to the trailing 30 days ending now and accepts offsets', async () => {
    const before = Date.now();
    const res = await health(tenant, didId);
    expect(res.status).toBe(200);
    const to = Date.parse(res.body.period.to);
    expect(to).toBeGreaterThanOrEqual(before - 1);
    expect(to - Date.parse(res.body.period.from)).toBe(30 * 24 * 3600_000);
    expect(res.body).toMatchObject({ dials: 0, answer_rate: null });
    const offset = await health(tenant, didId, `?to=${encodeURIComponent('2026-01-31T01:00:00+01:00')}`);
    expect(offset.body.period).toEqual({ from: '2026-01-01T00:00:00.000Z', to: TO });
    expect(offset.body.dials).toBe(6);
  });

  it('a retired DID still serves health', async () => {
    const created = await app.request('POST', '/v1/dids', { token: tenant.apiKey, body: { e164: '+12125557003' } });
    await cdr(tenant, { from: '+12125557003', startedAt: at('2026-01-05T00:00:00Z'), answeredAt: at('2026-01-05T00:00:01Z'), endedAt: at('2026-01-05T00:01:00Z') });
    expect((await app.request('DELETE', `/v1/dids/${created.body.did.id}`, { token: tenant.apiKey })).body.did.status).toBe('retired');
    const res = await health(tenant, created.body.did.id, `?from=${FROM}&to=${TO}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'retired', dials: 1, answered: 1, short_calls: 0, answer_rate: 1, short_call_rate: 0 });
  });

  it('422 unprocessable when from is not before to, 400 bad_request for a bad timestamp', async () => {
    expectError(await health(tenant, didId, `?from=${TO}&to=${FROM}`), 422, 'unprocessable');
    expectError(await health(tenant, didId, `?from=${FROM}&to=${FROM}`), 422, 'unprocessable');
    expectError(await health(tenant, didId, '?from=yesterday'), 400, 'bad_request');
    expectError(await health(tenant, didId, '?from=2030-01-01T00:00:00Z'), 422, 'unprocessable');
  });

  it('404 for an unknown, a malformed and another tenant’s DID', async () => {
    expectError(await health(tenant, randomUUID()), 404, 'not_found');
    expectError(await health(tenant, 'not-a-uuid'), 404, 'not_found');
    expectError(await health(other, didId), 404, 'not_found');
  });

  it('401 without a credential; 403 for a widget token', async () => {
    expectError(await app.request('GET', `/v1/dids/${didId}/health`), 401, 'unauthorized');
    const res = await widgetRouter(tenant, didRoutes(app.deps)).request(`/v1/dids/${didId}/health`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
  });
});
