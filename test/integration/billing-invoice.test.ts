import { createHash, randomUUID } from 'node:crypto';
import { withTenantSql } from '../../src/lib/tenancy';
import { provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

/** The previous UTC calendar month: a closed invoice whose usage the test writes at known instants. */
const now = new Date();
const prev = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
const MONTH = prev.toISOString().slice(0, 7);
const at = (day: number, hh = 12, mm = 0, ss = 0) => new Date(Date.UTC(prev.getUTCFullYear(), prev.getUTCMonth(), day, hh, mm, ss));
const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));

let serial = 0;
const nextNumber = () => `+1212555${String(1000 + serial++).padStart(4, '0')}`;

async function seed(t: ProvisionedTenant, work: (sql: { query: (text: string, values?: unknown[]) => Promise<unknown[]> }) => Promise<void>) {
  await withTenantSql(app.deps.db, t.tenantId, async (sql) => work(sql));
}

/** An answered outbound call of `seconds`, answered at `answeredAt`; `finalEnd` adds a finalize correction with that end instead. */
async function call(t: ProvisionedTenant, answeredAt: Date, seconds: number, finalEnd?: Date) {
  await seed(t, async (sql) => {
    const [debt] = (await sql.query(`INSERT INTO debts (tenant_id, external_ref, consumer_ref) VALUES (app_tenant_id(), $1, 'c') RETURNING id`, [randomUUID()])) as { id: string }[];
    const ended = new Date(answeredAt.getTime() + seconds * 1000);
    const [orig] = (await sql.query(
      `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, started_at, answered_at, ended_at)
       VALUES (app_tenant_id(), $1, 'c', 'k', '+12125550000', $2, $2, $3) RETURNING id`,
      [debt!.id, answeredAt, finalEnd ? null : ended],
    )) as { id: string }[];
    if (finalEnd) {
      await sql.query(
        `INSERT INTO call_attempts (tenant_id, debt_id, consumer_ref, debt_key, to_number, answered_at, ended_at, corrects_id)
         VALUES (app_tenant_id(), $1, 'c', 'k', '+12125550000', $2, $3, $4)`,
        [debt!.id, answeredAt, finalEnd, orig!.id],
      );
    }
  });
}

async function sms(t: ProvisionedTenant, occurredAt: Date, segments: number, costUsd: string | null) {
  await seed(t, (sql) =>
    sql.query(
      `INSERT INTO sms_messages (tenant_id, direction, status, to_e164, segments, cost_usd, occurred_at)
       VALUES (app_tenant_id(), 'outbound', $1, '+12125550000', $2, $3::numeric, $4)`,
      [costUsd === null ? 'queued' : 'sent', segments, costUsd, occurredAt],
    ).then(() => undefined),
  );
}

async function ai(t: ProvisionedTenant, answeredAt: Date, costUsd: string) {
  await seed(t, (sql) =>
    sql.query(
      `INSERT INTO ai_usage (tenant_id, call_uuid, answered_at, ended_at, billable_seconds, minute_rate_usd, cost_usd)
       VALUES (app_tenant_id(), $1, $2, $2, 60, 0.12, $3::numeric)`,
      [randomUUID(), answeredAt, costUsd],
    ).then(() => undefined),
  );
}

/** `count` DIDs added at `added` (default: now), retired at `retired` when given. */
async function dids(t: ProvisionedTenant, origin: 'house' | 'customer', count: number, opts: { added?: Date; retired?: Date } = {}): Promise<string[]> {
  const rows = await withTenantSql(app.deps.db, t.tenantId, (sql) =>
    sql.query<{ id: string }>(
      `INSERT INTO dids (tenant_id, e164, origin, status, created_at, retired_at)
       SELECT app_tenant_id(), x, $1, $2, coalesce($4::timestamptz, now()), $5 FROM unnest($3::text[]) AS x RETURNING id`,
      [origin, opts.retired ? 'retired' : 'active', Array.from({ length: count }, nextNumber), opts.added ?? null, opts.retired ?? null],
    ),
  );
  return rows.map((r) => r.id);
}

/** A recording export job as the export workflow leaves it: `audioFiles` WAVs delivered when done, `finishedAt`. */
async function exportJob(t: ProvisionedTenant, status: 'done' | 'failed', audioFiles: number | null, finishedAt: Date) {
  await seed(t, (sql) =>
    sql.query(
      `INSERT INTO recording_exports (tenant_id, status, filters, filter_hash, row_count, audio_files, finished_at)
       VALUES (app_tenant_id(), $1, '{}', $2, $3, $3, $4)`,
      [status, randomUUID(), audioFiles, finishedAt],
    ).then(() => undefined),
  );
}

/** Before the invoiced month starts. */
const beforeMonth = () => new Date(at(1, 0).getTime() - 86_400_000);

const invoice = (t: ProvisionedTenant, month = MONTH) => app.request('GET', `/v1/billing/invoice?month=${month}`, { token: t.apiKey });
const lines = (res: HttpResult) => Object.fromEntries(res.body.line_items.map((i: { kind: string }) => [i.kind, i]));

describe('GET /v1/billing/invoice', () => {
  it('a hand-computed month: every line kind', async () => {
    const t = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true, seats: 2 });
    // 61 s → 2 started minutes, 30 s → 1, 120 s → 2, a finalized call 59 s → 1: 6 minutes.
    await call(t, at(3), 61);
    await call(t, at(4), 30);
    await call(t, at(5), 120);
    await call(t, at(6), 0, new Date(at(6).getTime() + 59_000));
    // Outside the month: not billed.
    await call(t, new Date(monthEnd.getTime() + 1000), 600);
    await call(t, new Date(at(1, 0, 0, 0).getTime() - 1000), 600);
    // Charged rows only: 2 + 3 segments, 0.0158 + 0.0237.
    await sms(t, at(7), 2, '0.0158');
    await sms(t, at(8), 3, '0.0237');
    await sms(t, at(8), 4, null);
    await ai(t, at(9), '12.5000');
    await ai(t, at(10), '0.1200');
    // DIDs held at any time in the month: 18 house all month plus 3 retired mid-month = 21 (2 packs), 11 customer
    // (1 pack). Not held in it: 10 retired before it began, 10 added after it ended (now).
    const held = await dids(t, 'house', 18, { added: beforeMonth() });
    await dids(t, 'house', 3, { added: beforeMonth(), retired: at(15) });
    const out = await dids(t, 'house', 10, { added: new Date(beforeMonth().getTime() - 86_400_000), retired: beforeMonth() });
    await dids(t, 'house', 10);
    await dids(t, 'customer', 11, { added: beforeMonth() });
    // WAV files of exports completed in the month: 4 + 3; a failed job and jobs finished outside the month bill nothing.
    await exportJob(t, 'done', 4, at(11));
    await exportJob(t, 'done', 3, at(28, 23, 59, 59));
    await exportJob(t, 'failed', null, at(12));
    await exportJob(t, 'done', 9, beforeMonth());
    await exportJob(t, 'done', 9, new Date(monthEnd.getTime() + 1000));

    const res = await invoice(t);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      tenant_id: t.tenantId,
      month: MONTH,
      period: { from: at(1, 0).toISOString(), to: monthEnd.toISOString() },
      status: 'closed',
      currency: 'USD',
      tier: 'growth',
      voice_ai_enabled: true,
      // 297 + 200 + 0.09 + 21 + 50 + 25 + 0.0395 + 0.07
      subtotal_usd: '593.1995',
      tax_usd: null,
      total_usd: '593.1995',
    });
    const byKind = lines(res);
    expect(Object.keys(byKind)).toEqual(['seats', 'voice_ai', 'house_minutes', 'inbound_minutes', 'did_rent', 'did_overage', 'did_overage_customer', 'sms', 'wav_surcharge']);
    expect(byKind.seats).toMatchObject({ quantity: 3, unit_price_usd: '99.0000', amount_usd: '297.0000' });
    expect(byKind.voice_ai).toMatchObject({ quantity: 2, unit_price_usd: null, amount_usd: '200.0000' });
    expect(byKind.house_minutes).toMatchObject({ quantity: 6, unit_price_usd: '0.0150', amount_usd: '0.0900' });
    // Rent is for house DIDs only: customer DIDs are the tenant's own numbers.
    expect(byKind.did_rent).toMatchObject({ description: '21 house DIDs held in the period', quantity: 21, unit: 'did_month', unit_price_usd: '1.0000', amount_usd: '21.0000' });
    expect(byKind.did_overage).toMatchObject({ description: '21 house DIDs held in the period, 10 included', quantity: 2, unit_price_usd: '25.0000', amount_usd: '50.0000' });
    expect(byKind.did_overage_customer).toMatchObject({ description: '11 customer DIDs held in the period, 10 included', quantity: 1, amount_usd: '25.0000' });
    expect(byKind.sms).toMatchObject({ quantity: 5, unit_price_usd: null, amount_usd: '0.0395' });
    expect(byKind.wav_surcharge).toMatchObject({ quantity: 7, unit: 'wav_file', unit_price_usd: '0.0100', amount_usd: '0.0700' });

    // A closed month bills the same when read again after a DID it counted is retired and one it did not
    // count is brought back.
    const retired = await app.request('DELETE', `/v1/dids/${held[0]}`, { token: t.apiKey });
    expect(retired.status).toBe(200);
    const back = await app.request('PATCH', `/v1/dids/${out[0]}`, { token: t.apiKey, body: { status: 'active' } });
    expect(back.body.did.status).toBe('active');
    expect((await invoice(t)).body).toEqual(res.body);
  });

  it('voice AI above the minimum bills the metered cost; seats above the floor bill as they are', async () => {
    const t = await provisionTenant(app, { tier: 'scale', voice_ai_enabled: true, seats: 7 });
    await ai(t, at(2), '150.1234');
    await ai(t, at(20), '100.0000');
    const res = await invoice(t);
    expect(lines(res).voice_ai).toMatchObject({ quantity: 2, amount_usd: '250.1234' });
    expect(lines(res).seats).toMatchObject({ quantity: 7, amount_usd: '693.0000' });
    // 693 + 250.1234, nothing else used
    expect(res.body.total_usd).toBe('943.1234');
  });

  it('voice AI off: the line is 0 whatever was metered; no DIDs within the allowance bill nothing', async () => {
    const t = await provisionTenant(app, { seats: 3 });
    await ai(t, at(2), '42.0000');
    await dids(t, 'house', 10, { added: beforeMonth() });
    await dids(t, 'customer', 10, { added: beforeMonth() });
    const res = await invoice(t);
    expect(lines(res).voice_ai).toMatchObject({ amount_usd: '0.0000' });
    expect(lines(res).did_overage).toMatchObject({ quantity: 0, amount_usd: '0.0000' });
    expect(lines(res).did_overage_customer).toMatchObject({ quantity: 0, amount_usd: '0.0000' });
    // The 10 house DIDs still pay their rent.
    expect(lines(res).did_rent).toMatchObject({ quantity: 10, amount_usd: '10.0000' });
    expect(res.body.total_usd).toBe('307.0000');
  });

  it('the current month is open; 400 for a malformed month or unknown key, 422 for a month not started', async () => {
    const t = await provisionTenant(app);
    const current = await invoice(t, now.toISOString().slice(0, 7));
    expect(current.body.status).toBe('open');
    for (const month of ['2026-13', '2026-1', 'abc']) expectError(await invoice(t, month), 400, 'bad_request');
    expectError(await app.request('GET', '/v1/billing/invoice', { token: t.apiKey }), 400, 'bad_request');
    expectError(await app.request('GET', `/v1/billing/invoice?month=${MONTH}&x=1`, { token: t.apiKey }), 400, 'bad_request');
    const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 7);
    expectError(await invoice(t, next), 422, 'unprocessable', /not started/);
  });

  it('tenants see only their own usage', async () => {
    const a = await provisionTenant(app);
    const b = await provisionTenant(app);
    await sms(a, at(3), 1, '0.0079');
    expect(lines(await invoice(b)).sms).toMatchObject({ quantity: 0, amount_usd: '0.0000' });
    expect(lines(await invoice(a)).sms).toMatchObject({ quantity: 1, amount_usd: '0.0079' });
  });
});

describe('GET /v1/billing/summary', () => {
  it('JSON over a half-open window, metered voice AI without the minimum, with X-Artifact-SHA256', async () => {
    const t = await provisionTenant(app, { tier: 'growth', voice_ai_enabled: true });
    await ai(t, at(2), '3.0000');
    await call(t, at(2), 90);
    await sms(t, at(2), 1, '0.0079');
    await sms(t, at(3), 1, '0.0079');
    const from = at(2, 0).toISOString();
    const to = at(3, 0).toISOString();
    const res = await app.request('GET', `/v1/billing/summary?from=${from}&to=${to}`, { token: t.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers['x-artifact-sha256']).toBe(createHash('sha256').update(res.text).digest('hex'));
    expect(res.body).toMatchObject({ tenant_id: t.tenantId, tier: 'growth', tier_label: 'Growth', voice_ai_enabled: true, currency: 'USD', period: { from: at(2, 0).toISOString(), to: at(3, 0).toISOString() } });
    const byKind = lines(res);
    expect(byKind.voice_ai.amount_usd).toBe('3.0000');
    expect(byKind.house_minutes).toMatchObject({ quantity: 2, amount_usd: '0.0300' });
    expect(byKind.sms).toMatchObject({ quantity: 1, amount_usd: '0.0079' });
    // 297 + 3 + 0.03 + 0.0079
    expect(res.body.subtotal_usd).toBe('300.0379');
  });

  it('CSV by format=csv or Accept: text/csv, hashed', async () => {
    const t = await provisionTenant(app);
    const q = `from=${at(1, 0).toISOString()}&to=${at(2, 0).toISOString()}`;
    for (const [path, accept] of [
      [`/v1/billing/summary?${q}&format=csv`, undefined],
      [`/v1/billing/summary?${q}`, 'text/csv'],
    ] as const) {
      const res = await app.request('GET', path, { token: t.apiKey, headers: accept ? { accept } : {} });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      expect(res.headers['x-artifact-sha256']).toBe(createHash('sha256').update(res.text).digest('hex'));
      expect(res.text.split('\r\n')).toEqual([
        'kind,description,quantity,unit,unit_price_usd,amount_usd',
        'seats,"3 billed seats (tenant seats 3, floor 3)",3,seat_month,99.0000,297.0000',
        'voice_ai,voice-AI add-on off,0,ai_call,,0.0000',
        'house_minutes,"answered outbound minutes, per started minute",0,minute,0.0150,0.0000',
        'inbound_minutes,"answered inbound minutes, per started minute",0,minute,0.0100,0.0000',
        'did_rent,0 house DIDs held in the period,0,did_month,1.0000,0.0000',
        'did_overage,"0 house DIDs held in the period, 10 included",0,pack_of_10,25.0000,0.0000',
        'did_overage_customer,"0 customer DIDs held in the period, 10 included",0,pack_of_10,25.0000,0.0000',
        'sms,charged SMS segments (ledger prices),0,segment,,0.0000',
        'wav_surcharge,WAV files delivered by completed recording exports,0,wav_file,0.0100,0.0000',
        '',
      ]);
    }
  });

  it('422 when from is not before to; 400 for a malformed date or an unknown key', async () => {
    const t = await provisionTenant(app);
    const x = at(2).toISOString();
    expectError(await app.request('GET', `/v1/billing/summary?from=${x}&to=${x}`, { token: t.apiKey }), 422, 'unprocessable', /before/);
    expectError(await app.request('GET', '/v1/billing/summary?from=yesterday', { token: t.apiKey }), 400, 'bad_request');
    expectError(await app.request('GET', '/v1/billing/summary?period=x', { token: t.apiKey }), 400, 'bad_request');
  });
});
