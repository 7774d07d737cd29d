import { randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { SmsProviderBaseUrlRejected, SmsProviderUnavailable } from '../../src/modules/sms/adapters';
import { smsProviderGateway } from '../../src/modules/sms-providers/sms-provider.resolve';
import { bindSmsGateway, type SmsGateway } from '../../src/modules/sms/sms.service';
import { daytimePrefix } from '../helpers/dial-loop';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

/**
 * The deployment's provider is the mock adapter (SMS_PROVIDER_ADAPTER=mock), resolved by the real
 * resolution. The bound gateway wraps the real one only to count adapter calls and to stand in for
 * two provider faults: destinations ending 98 hit an endpoint that fails the egress check at send
 * time, 97 a provider that never answers. The mock itself refuses destinations ending 99.
 */
const ZONES: Record<string, string> = {
  '+1303555': 'America/Denver',
  '+44207946': 'Europe/London',
  '+1808555': 'Pacific/Honolulu',
  '+1671555': 'Pacific/Guam',
  '+1404555': 'America/New_York',
};

const providerCalls: string[] = [];
const gateway: SmsGateway = {
  ...smsProviderGateway,
  adapterFor(name) {
    const real = smsProviderGateway.adapterFor(name);
    return {
      name: real.name,
      async send(provider, request, context) {
        providerCalls.push(request.to);
        if (request.to.endsWith('98')) throw new SmsProviderBaseUrlRejected('http://10.0.0.1 is not a public https 443 endpoint');
        if (request.to.endsWith('97')) throw new SmsProviderUnavailable('socket hang up');
        return real.send(provider, request, context);
      },
    };
  },
};

let app: TestApp;
let tenant: ProvisionedTenant;
let prefix: string;
let zone: string;
let serial = 1000;
const PRICE = 0.0079;

/** A destination where it is daytime now, ending in the given two digits. */
const phone = (lastTwo = 10) => `${prefix}${String((serial += 1) % 100).padStart(2, '0')}${String(lastTwo).padStart(2, '0')}`;

async function seedDebt(t: ProvisionedTenant, to: string, opts: { consent?: boolean; dnc?: boolean } = {}): Promise<string> {
  return withTenant(app.deps.db, t.tenantId, async (tx) => {
    const debt = await tx.debt.create({
      data: { tenantId: t.tenantId, externalRef: `sms-${randomUUID()}`, consumerRef: `c-${randomUUID().slice(0, 8)}`, amountCents: 5000n },
    });
    await tx.debtContact.create({ data: { tenantId: t.tenantId, debtId: debt.id, phoneE164: to, isPrimary: true } });
    if (opts.consent !== false) {
      await tx.consent.create({ data: { tenantId: t.tenantId, debtId: debt.id, phoneE164: to, channel: 'sms', source: 'import' } });
    }
    if (opts.dnc) await tx.dncEntry.create({ data: { tenantId: t.tenantId, phoneE164: to, source: 'api' } });
    return debt.id;
  });
}

/**
 * The ledger as the product orders it: originals, then transitions, each by recorded_at (an original and
 * its transition can share a millisecond).
 */
async function ledger(t: ProvisionedTenant) {
  const rows = await withTenant(app.deps.db, t.tenantId, (tx) => tx.smsMessage.findMany({ orderBy: [{ recordedAt: 'asc' }, { id: 'asc' }] }));
  return [...rows.filter((r) => r.correctsId === null), ...rows.filter((r) => r.correctsId !== null)];
}

const send = (t: ProvisionedTenant, body: Record<string, unknown>) => app.request('POST', '/v1/sms/messages', { token: t.apiKey, body });

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

async function patchTenant(t: ProvisionedTenant, body: Record<string, unknown>) {
  const res = await app.request('PATCH', `/v1/admin/tenants/${t.tenantId}`, { token: ADMIN_TOKEN, body });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  app = await startTestApp({ SMS_PROVIDER_ADAPTER: 'mock' });
  bindSmsGateway(app.deps, gateway);
  tenant = await provisionTenant(app);
  prefix = daytimePrefix();
  zone = ZONES[prefix]!;
});
afterAll(async () => {
  await app?.close();
});
beforeEach(() => {
  providerCalls.length = 0;
});

describe('POST /v1/sms/messages', () => {
  it('accepted: a queued original and a sent transition with segments and the segment debit', async () => {
    const to = phone();
    const debtId = await seedDebt(tenant, to);
    const body = `Hello from Acme € ${'x'.repeat(160)} Reply STOP to opt out`;
    const res = await send(tenant, { to, body, debt_id: debtId, timezone: zone, client_ref: `acc-${randomUUID()}`, consumer_ref: 'C-1' });
    expect(res.status).toBe(202);
    expect(res.body.duplicate).toBe(false);
    const m = res.body.sms_message;
    expect(m).toMatchObject({ direction: 'outbound', status: 'sent', to_e164: to, debt_id: debtId, body, encoding: 'gsm7', segments: 2, corrects_id: null, consumer_ref: 'C-1' });
    expect(m.cost_usd).toBeCloseTo(2 * PRICE, 6);
    expect(m.provider_message_id).toMatch(/^mock-/);
    expect(m.compliance_snapshot).toMatchObject({ allowed: true, decision_id: expect.any(String) });
    expect(Object.keys(m.timestamps).sort()).toEqual(['queued', 'sent']);
    expect(m.transitions).toHaveLength(1);
    expect(m.transitions[0]).toMatchObject({ status: 'sent', corrects_id: m.id, segments: 2, provider_message_id: m.provider_message_id, body_preview: null });
    expect(providerCalls).toEqual([to]);

    const rows = (await ledger(tenant)).filter((r) => r.id === m.id || r.correctsId === m.id);
    expect(rows.map((r) => [r.status, r.costUsd === null ? null : Number(r.costUsd)])).toEqual([
      ['queued', null],
      ['sent', Number((2 * PRICE).toFixed(6))],
    ]);
  });

  it('blocked by the engine (no consent, DNC, quiet hours): 422 with gate and decision_id, no provider call, no ledger row', async () => {
    const before = (await ledger(tenant)).length;

    const noConsent = phone();
    const d1 = await seedDebt(tenant, noConsent, { consent: false });
    const r1 = await send(tenant, { to: noConsent, body: 'Reply STOP to opt out', debt_id: d1, timezone: zone });
    expectError(r1, 422, 'compliance_blocked');
    expect(r1.body.error).toMatchObject({ gate: 'tcpa_no_consent', decision_id: expect.any(String) });

    const listed = phone();
    const d2 = await seedDebt(tenant, listed, { dnc: true });
    const r2 = await send(tenant, { to: listed, body: 'Reply STOP to opt out', debt_id: d2, timezone: zone });
    expectError(r2, 422, 'compliance_blocked');
    expect(r2.body.error.gate).toBe('dnc_listed');

    // A zone where it is night now.
    const night = ['Asia/Tokyo', 'Europe/Berlin', 'America/Los_Angeles', 'Asia/Kolkata', 'Pacific/Auckland', 'America/Sao_Paulo'].find((z) => {
      const h = Number(new Intl.DateTimeFormat('en-US', { timeZone: z, hour: 'numeric', hourCycle: 'h23' }).format(new Date()));
      return h < 8 || h >= 21;
    })!;
    const late = phone();
    const d3 = await seedDebt(tenant, late);
    const r3 = await send(tenant, { to: late, body: 'Reply STOP to opt out', debt_id: d3, timezone: night });
    expectError(r3, 422, 'compliance_blocked');
    expect(r3.body.error.gate).toBe('quiet_hours');

    const r4 = await send(tenant, { to: phone(), body: 'no debt named' });
    expectError(r4, 422, 'compliance_blocked');

    expect(providerCalls).toEqual([]);
    expect((await ledger(tenant)).length).toBe(before);
  });

  it('spend cap: reaches neither the engine nor a provider', async () => {
    const t = await provisionTenant(app);
    await patchTenant(t, { sms_monthly_budget_usd: 0.01 });
    const to = phone();
    const debtId = await seedDebt(t, to);
    // One segment (0.0079) fits the 0.01 budget.
    const ok = await send(t, { to, body: 'first Reply STOP', debt_id: debtId, timezone: zone });
    expect(ok.status).toBe(202);
    const decisionsBefore = await withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.count({ where: { action: 'compliance.decision' } }));
    const capped = await send(t, { to, body: 'second Reply STOP', debt_id: debtId, timezone: zone });
    expectError(capped, 429, 'sms_spend_cap_exceeded');
    expect(capped.headers['retry-after']).toBeUndefined();
    const decisionsAfter = await withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.count({ where: { action: 'compliance.decision' } }));
    expect(decisionsAfter).toBe(decisionsBefore);
    expect(providerCalls).toEqual([to]);
    expect((await ledger(t)).map((r) => r.status)).toEqual(['queued', 'sent']);
  });

  it('unconfigured provider: 422 sms_provider_unconfigured, nothing recorded (a deployment without SMS_PROVIDER_ADAPTER)', async () => {
    const bare = await startTestApp();
    try {
      const t = await provisionTenant(bare);
      const to = phone();
      const debtId = await seedDebt(t, to);
      const res = await bare.request('POST', '/v1/sms/messages', { token: t.apiKey, body: { to, body: 'Reply STOP', debt_id: debtId, timezone: zone } });
      expectError(res, 422, 'sms_provider_unconfigured');
      expect(await ledger(t)).toEqual([]);
    } finally {
      await bare.close();
    }
  });

  it('mock refusal (to ending 99): 502 provider_error with sms_message_id and a failed transition, no charge', async () => {
    const to = phone(99);
    const debtId = await seedDebt(tenant, to);
    const res = await send(tenant, { to, body: 'Reply STOP', debt_id: debtId, timezone: zone });
    expectError(res, 502, 'provider_error');
    const id = res.body.error.sms_message_id;
    const view = await app.request('GET', `/v1/sms/messages/${id}`, { token: tenant.apiKey });
    expect(view.status).toBe(200);
    expect(view.body.sms_message).toMatchObject({ id, status: 'failed', cost_usd: null, error_code: 'mock_rejected' });
    expect(view.body.sms_message.transitions.map((r: any) => r.status)).toEqual(['failed']);
  });

  it('base URL rejected at send time: 422 with a failed transition; a provider fault: 502 with a failed transition', async () => {
    const to98 = phone(98);
    const r1 = await send(tenant, { to: to98, body: 'Reply STOP', debt_id: await seedDebt(tenant, to98), timezone: zone });
    expectError(r1, 422, 'sms_provider_base_url_rejected');
    const to97 = phone(97);
    const r2 = await send(tenant, { to: to97, body: 'Reply STOP', debt_id: await seedDebt(tenant, to97), timezone: zone });
    expectError(r2, 502, 'provider_error');
    for (const [res, code] of [
      [r1, 'base_url_rejected'],
      [r2, 'provider_unreachable'],
    ] as const) {
      const view = await app.request('GET', `/v1/sms/messages/${res.body.error.sms_message_id}`, { token: tenant.apiKey });
      expect(view.body.sms_message).toMatchObject({ status: 'failed', error_code: code, cost_usd: null });
    }
  });

  it('throttled at max_cps, before the queued row', async () => {
    const t = await provisionTenant(app);
    await patchTenant(t, { max_cps: 1 });
    const to = phone();
    const debtId = await seedDebt(t, to);
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await send(t, { to, body: `n${i} Reply STOP`, debt_id: debtId, timezone: zone }));
    expect(results[0]!.status).toBe(202);
    // Sends within one second of the first: at least one meets the brake.
    const throttled = results.filter((r) => r.status === 429);
    expect(throttled.length).toBeGreaterThan(0);
    for (const r of throttled) expectError(r, 429, 'throttled');
    const originals = (await ledger(t)).filter((r) => r.correctsId === null);
    expect(originals).toHaveLength(3 - throttled.length);
  });

  it('client_ref replays: 10 concurrent sends make one ledger message and nine duplicates', async () => {
    const to = phone();
    const debtId = await seedDebt(tenant, to);
    const clientRef = `replay-${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 10 }, () => send(tenant, { to, body: 'Reply STOP', debt_id: debtId, timezone: zone, client_ref: clientRef })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(202));
    expect(results.filter((r) => r.body.duplicate === false)).toHaveLength(1);
    expect(results.filter((r) => r.body.duplicate === true)).toHaveLength(9);
    const ids = new Set(results.map((r) => r.body.sms_message.id));
    expect(ids.size).toBe(1);
    const originals = (await ledger(tenant)).filter((r) => r.clientRef === clientRef && r.correctsId === null);
    expect(originals).toHaveLength(1);
    expect(providerCalls).toEqual([to]);

    // A later replay returns the settled message and contacts nothing.
    const again = await send(tenant, { to, body: 'changed Reply STOP', client_ref: clientRef });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ duplicate: true, sms_message: { id: [...ids][0], status: 'sent', body: 'Reply STOP' } });
    expect(providerCalls).toEqual([to]);
  });

  it.each([
    [{ body: 'hi' }, 'missing to'],
    [{ to: '3035550100', body: 'hi' }, 'not E.164'],
    [{ to: '+13035550100', body: '   ' }, 'blank body'],
    [{ to: '+13035550100', body: 'x'.repeat(1601) }, 'body over 1600'],
    [{ to: '+13035550100', body: 'hi', timezone: 'Mars/Olympus' }, 'bad zone'],
    [{ to: '+13035550100', body: 'hi', debt_id: 'nope' }, 'bad debt_id'],
    [{ to: '+13035550100', body: 'hi', surprise: 1 }, 'unknown key'],
  ].map(([b, why]) => [why, b]) as Array<[string, Record<string, unknown>]>)('400 bad_request: %s', async (_why, body) => {
    expectError(await send(tenant, body), 400, 'bad_request');
  });

  it('422 for a campaign_id that is not the tenant\'s; 401 without a credential', async () => {
    expectError(await send(tenant, { to: phone(), body: 'hi', campaign_id: randomUUID() }), 422, 'unprocessable');
    expectError(await app.request('POST', '/v1/sms/messages', { body: { to: phone(), body: 'hi' } }), 401, 'unauthorized');
    expectError(await app.request('GET', '/v1/sms/messages'), 401, 'unauthorized');
    expectError(await app.request('GET', '/v1/stats/sms-usage'), 401, 'unauthorized');
  });

  it('from: only an active DID of the tenant; another tenant\'s active DID, an unknown number or an own quarantined DID is 422, nothing sent', async () => {
    const other = await provisionTenant(app);
    const [own, foreign, parked, unknown] = [1, 2, 3, 4].map((n) => `+1479555${String(n).padStart(4, '0')}`) as [string, string, string, string];
    const house = (t: ProvisionedTenant, e164: string) => app.request('POST', `/v1/admin/tenants/${t.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [e164] } });
    expect((await house(tenant, own)).status).toBe(201);
    expect((await house(other, foreign)).status).toBe(201);
    expect((await app.request('POST', '/v1/dids', { token: tenant.apiKey, body: { e164: parked, status: 'quarantine' } })).status).toBe(201);
    const to = phone();
    const debtId = await seedDebt(tenant, to);
    const before = (await ledger(tenant)).length;
    for (const from of [foreign, unknown, parked]) {
      expectError(await send(tenant, { to, from, body: 'Hello', debt_id: debtId, timezone: zone }), 422, 'unprocessable');
    }
    expect(providerCalls).toEqual([]);
    expect((await ledger(tenant)).length).toBe(before);

    const ok = await send(tenant, { to, from: own, body: 'Hello', debt_id: debtId, timezone: zone });
    expect(ok.status).toBe(202);
    expect(ok.body.sms_message).toMatchObject({ status: 'sent', from_e164: own });
    expect(providerCalls).toEqual([to]);
  });
});

describe('GET /v1/sms/messages and /{id}', () => {
  it('lists originals and transitions newest first with a 40-character preview, paginates, filters', async () => {
    const t = await provisionTenant(app);
    const to = phone();
    const debtId = await seedDebt(t, to);
    const body = 'A fairly long message body that is longer than forty characters. Reply STOP';
    const sent = await send(t, { to, body, debt_id: debtId, timezone: zone });
    expect(sent.status).toBe(202);
    const id = sent.body.sms_message.id;

    const list = await app.request('GET', '/v1/sms/messages', { token: t.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.next_cursor).toBeNull();
    expect(list.body.sms_messages.map((r: any) => [r.status, r.corrects_id])).toEqual([
      ['sent', id],
      ['queued', null],
    ]);
    const original = list.body.sms_messages[1];
    expect(Object.keys(original).sort()).toEqual(
      ['id', 'direction', 'status', 'from_e164', 'to_e164', 'body_preview', 'segments', 'client_ref', 'provider_id', 'provider_message_id', 'campaign_id', 'debt_id', 'occurred_at', 'corrects_id', 'recorded_at'].sort(),
    );
    expect(original.body_preview).toBe(body.slice(0, 40));

    const p1 = await app.request('GET', '/v1/sms/messages?limit=1', { token: t.apiKey });
    expect(p1.body.sms_messages).toHaveLength(1);
    const p2 = await app.request('GET', `/v1/sms/messages?limit=1&cursor=${p1.body.next_cursor}`, { token: t.apiKey });
    expect(p2.body.sms_messages[0].id).toBe(id);
    expect(p2.body.next_cursor).toBeNull();

    const queued = await app.request('GET', `/v1/sms/messages?status=queued&debt_id=${debtId}&direction=outbound`, { token: t.apiKey });
    expect(queued.body.sms_messages.map((r: any) => r.id)).toEqual([id]);
    expectError(await app.request('GET', '/v1/sms/messages?limit=1001', { token: t.apiKey }), 400, 'bad_request');
    expectError(await app.request('GET', '/v1/sms/messages?status=bogus', { token: t.apiKey }), 400, 'bad_request');
    expectError(await app.request('GET', '/v1/sms/messages?cursor=zzz', { token: t.apiKey }), 400, 'bad_request');

    const view = await app.request('GET', `/v1/sms/messages/${id}`, { token: t.apiKey });
    expect(view.status).toBe(200);
    expect(view.body.sms_message).toMatchObject({ id, status: 'sent', body, segments: 1, corrects_id: null });
    // The id of a transition names the same message.
    const viaTransition = await app.request('GET', `/v1/sms/messages/${list.body.sms_messages[0].id}`, { token: t.apiKey });
    expect(viaTransition.body.sms_message.id).toBe(id);

    // Cross-tenant, unknown, malformed: 404.
    expectError(await app.request('GET', `/v1/sms/messages/${id}`, { token: tenant.apiKey }), 404, 'not_found');
    expectError(await app.request('GET', `/v1/sms/messages/${randomUUID()}`, { token: t.apiKey }), 404, 'not_found');
    expectError(await app.request('GET', '/v1/sms/messages/not-a-uuid', { token: t.apiKey }), 404, 'not_found');
    const foreignList = await app.request('GET', `/v1/sms/messages?debt_id=${debtId}`, { token: tenant.apiKey });
    expect(foreignList.body.sms_messages).toEqual([]);
  });
});

describe('GET /v1/stats/sms-usage', () => {
  it('counts charged messages, segments and cost in the window, by UTC day, with the cap figures', async () => {
    const t = await provisionTenant(app);
    await patchTenant(t, { sms_monthly_budget_usd: 50 });
    const a = phone();
    const b = phone();
    const [da, db] = [await seedDebt(t, a), await seedDebt(t, b)];
    expect((await send(t, { to: a, body: 'short Reply STOP', debt_id: da, timezone: zone })).status).toBe(202);
    expect((await send(t, { to: b, body: `ж${'y'.repeat(80)} Reply STOP`, debt_id: db, timezone: zone })).status).toBe(202); // ucs2, 2 segments
    const refused = phone(99);
    expect((await send(t, { to: refused, body: 'Reply STOP', debt_id: await seedDebt(t, refused), timezone: zone })).status).toBe(502);

    const res = await app.request('GET', '/v1/stats/sms-usage', { token: t.apiKey });
    expect(res.status).toBe(200);
    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const cost = Number((3 * PRICE).toFixed(6));
    expect(res.body).toMatchObject({ from: monthStart, campaign_id: null, price_per_segment_usd: PRICE, messages: 2, segments: 3, budget_usd: 50 });
    expect(res.body.cost_usd).toBeCloseTo(cost, 6);
    expect(res.body.month_to_date_cost_usd).toBeCloseTo(cost, 6);
    expect(res.body.daily).toEqual([{ date: now.toISOString().slice(0, 10), messages: 2, segments: 3, cost_usd: expect.closeTo(cost, 6) }]);

    const empty = await app.request('GET', `/v1/stats/sms-usage?from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z&campaign_id=${randomUUID()}`, { token: t.apiKey });
    expect(empty.body).toMatchObject({ messages: 0, segments: 0, cost_usd: 0, daily: [] });
    expect(empty.body.month_to_date_cost_usd).toBeCloseTo(cost, 6);
    expectError(await app.request('GET', '/v1/stats/sms-usage?from=2020-02-01T00:00:00Z&to=2020-01-01T00:00:00Z', { token: t.apiKey }), 422, 'unprocessable');
    expectError(await app.request('GET', '/v1/stats/sms-usage?from=yesterday', { token: t.apiKey }), 400, 'bad_request');
  });
});
