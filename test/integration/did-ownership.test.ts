import { Client } from 'pg';
import { withTenant } from '../../src/lib/tenancy';
import { VERIFICATION_RESEND_COOLDOWN_MS, VERIFICATION_TTL_MS } from '../../src/modules/dids/did-verification.rules';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { claimDid, startPlatformSms, type PlatformSms } from '../helpers/platform-sms';

jest.setTimeout(120_000);

/**
 * Issue 17, number ownership. Before: POST /v1/dids stored any number as an active DID, so a
 * second tenant could register another collector's caller id (and route its callbacks, text from
 * it). Now a number is active in at most one tenant, and a customer number becomes active only
 * with the code the platform texts to it. The deployment's SMS provider is a loopback receiver:
 * the tests learn each code only from what it received, as the holder of the number would.
 */

function expectError(res: HttpResult, status: number, code: string, messagePart?: RegExp) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  if (messagePart !== undefined) expect(res.body.error.message).toMatch(messagePart);
}

let serial = 100;
const nextNumber = () => `+1332555${String(serial++).padStart(4, '0')}`;

let app: TestApp;
let platform: PlatformSms;
let owner: Client;
let a: ProvisionedTenant;
let b: ProvisionedTenant;

const post = (t: ProvisionedTenant, body: unknown) => app.request('POST', '/v1/dids', { token: t.apiKey, body });
const patch = (t: ProvisionedTenant, id: string, body: unknown) => app.request('PATCH', `/v1/dids/${id}`, { token: t.apiKey, body });
const get = (t: ProvisionedTenant, id: string) => app.request('GET', `/v1/dids/${id}`, { token: t.apiKey });
const verify = (t: ProvisionedTenant, id: string, code: unknown) => app.request('POST', `/v1/dids/${id}/verify`, { token: t.apiKey, body: { code } });
const resend = (t: ProvisionedTenant, id: string) => app.request('POST', `/v1/dids/${id}/verification`, { token: t.apiKey });
const provisionHouse = (t: ProvisionedTenant, e164s: string[]) => app.request('POST', `/v1/admin/tenants/${t.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s } });
const wrongCodeFor = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
const audits = (t: ProvisionedTenant, didId: string) =>
  withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findMany({ where: { subjectType: 'did', subjectId: didId }, orderBy: [{ occurredAt: 'asc' }, { seq: 'asc' }] }));

/** Every place a tenant or the owner could read: the DID row and the tenant's audit log hold no code in clear. */
async function storedText(didId: string): Promise<string> {
  const rows = await owner.query<{ t: string }>(
    `SELECT (SELECT d::text FROM dids d WHERE d.id::text = $1) || coalesce((SELECT string_agg(a.payload::text, ' ') FROM audit_log a WHERE a.subject_id = $1), '') AS t`,
    [didId],
  );
  return rows.rows[0]!.t;
}

beforeAll(async () => {
  platform = await startPlatformSms();
  app = await startTestApp(platform.env());
  owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await owner.connect();
  [a, b] = await Promise.all([provisionTenant(app), provisionTenant(app)]);
});
afterAll(async () => {
  await owner?.end();
  await app?.close();
  await platform?.close();
});
/** Moves the clock only (timers stay real): the service reads the time as any request would. */
function moveClock(ms: number) {
  const now = Date.now();
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask', 'hrtime', 'performance'] });
  jest.setSystemTime(now + ms);
}

afterEach(() => {
  jest.useRealTimers();
  platform.state.refuse = false;
});

describe('claiming a number another tenant holds', () => {
  it('a second tenant registering another tenant\'s active DID is 409, naming nobody, and no code is texted', async () => {
    const house = nextNumber();
    expect((await provisionHouse(a, [house])).status).toBe(201);
    const claimed = await claimDid(app, platform, a.apiKey, nextNumber());
    for (const e164 of [house, claimed.e164]) {
      const sentBefore = platform.received.length;
      for (const status of ['active', 'quarantine', 'retired']) {
        const res = await post(b, { e164, status });
        expectError(res, 409, 'conflict');
        expect(res.text).not.toContain(a.tenantId);
        expect(res.text).not.toContain(a.name);
      }
      expect(platform.received.length).toBe(sentBefore);
      // The same answer a tenant gets for a number it holds itself: nothing tells the two apart.
      const own = await post(a, { e164 });
      expect(own.body.error.message).toBe((await post(b, { e164 })).body.error.message);
    }
    expect((await app.request('GET', '/v1/dids?limit=1000', { token: b.apiKey })).body.dids).toEqual([]);
  });

  it('the operator cannot provision a number active in another tenant either: 409 naming the number, not the tenant; nothing added', async () => {
    const taken = (await claimDid(app, platform, a.apiKey, nextNumber())).e164;
    const fresh = nextNumber();
    const res = await provisionHouse(b, [fresh, taken]);
    expectError(res, 409, 'conflict', new RegExp(taken.replace('+', '\\+')));
    expect(res.text).not.toContain(a.tenantId);
    const listed = (await app.request('GET', '/v1/dids?limit=1000', { token: b.apiKey })).body.dids.map((d: { e164: string }) => d.e164);
    expect(listed).not.toContain(fresh);
    expect(listed).not.toContain(taken);
  });

  it('PostgreSQL holds the line whatever the service does: a second active row for a number is a unique violation', async () => {
    const e164 = (await claimDid(app, platform, a.apiKey, nextNumber())).e164;
    await expect(withTenant(app.deps.db, b.tenantId, (tx) => tx.did.create({ data: { tenantId: b.tenantId, e164, status: 'active', origin: 'house' } }))).rejects.toThrow();
    const rows = await owner.query<{ n: string }>("SELECT count(*) AS n FROM dids WHERE e164 = $1 AND status = 'active'", [e164]);
    expect(rows.rows[0]!.n).toBe('1');
  });

  it('once the holder lets the number go, the new holder proves control; the earlier holder cannot take it back without a new code', async () => {
    const mine = await claimDid(app, platform, a.apiKey, nextNumber());
    expect((await patch(a, mine.id, { status: 'quarantine' })).body.did).toMatchObject({ status: 'quarantine', verification: { status: 'verified', method: 'sms' } });
    // Quarantined in a: b may register and prove control of it.
    const theirs = await claimDid(app, platform, b.apiKey, mine.e164);
    expect(theirs).toMatchObject({ status: 'active', origin: 'customer', verification: { status: 'verified', method: 'sms', expires_at: null } });
    // a's proof no longer counts: back to active is 422, not a race for the unique index.
    expect((await get(a, mine.id)).body.did.verification).toBeNull();
    expectError(await patch(a, mine.id, { status: 'active' }), 422, 'unprocessable', /verification/);
    // And a new code for a is refused while b holds the number.
    const sent = platform.received.length;
    expectError(await resend(a, mine.id), 409, 'conflict');
    expect(platform.received.length).toBe(sent);
  });
});

describe('proof of control: the code texted to the number', () => {
  it('POST /v1/dids stores the DID in quarantine with a pending verification; the platform provider texts the code to the number', async () => {
    const e164 = nextNumber();
    const res = await post(a, { e164, labels: ['claimed'] });
    expect(res.status).toBe(201);
    const did = res.body.did;
    expect(did).toMatchObject({ e164, status: 'quarantine', origin: 'customer', labels: ['claimed'] });
    expect(did.verification).toEqual({ status: 'pending', method: 'sms', expires_at: expect.any(String), attempts_left: 5 });
    const ttl = Date.parse(did.verification.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(VERIFICATION_TTL_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(VERIFICATION_TTL_MS);
    // Sent by the deployment's own provider, with the deployment's key, from its default sender; the text names no tenant.
    const texts = platform.received.filter((r) => r.to === e164);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatchObject({ from: null, authorization: `Bearer ${platform.apiKey}` });
    expect(texts[0]!.text).not.toContain(a.name);
    const [code] = platform.codesTo(e164);
    expect(code).toMatch(/^\d{6}$/);
    // The code is nowhere in clear: not on the row, not in the audit log, not in the tenant's SMS ledger.
    expect(await storedText(did.id)).not.toContain(code);
    expect((await app.request('GET', '/v1/sms/messages', { token: a.apiKey })).text).not.toContain(code);
    expect((await audits(a, did.id)).map((e) => e.action)).toEqual(['did.created', 'did.verification_sent']);

    // Before verification, active is refused.
    expectError(await patch(a, did.id, { status: 'active' }), 422, 'unprocessable', /proving control/);

    const ok = await verify(a, did.id, code);
    expect(ok.status).toBe(200);
    expect(ok.body.did).toMatchObject({ id: did.id, status: 'active', verification: { status: 'verified', method: 'sms', expires_at: null, attempts_left: null } });
    expect((await get(a, did.id)).body.did).toEqual(ok.body.did);
    expect((await audits(a, did.id)).map((e) => e.action)).toEqual(['did.created', 'did.verification_sent', 'did.verified']);
    // A used code is gone.
    expectError(await verify(a, did.id, code), 422, 'unprocessable', /no code is pending/);
    // Proven once, the DID may rest in quarantine and come back.
    expect((await patch(a, did.id, { status: 'quarantine' })).body.did.status).toBe('quarantine');
    expect((await patch(a, did.id, { status: 'active' })).body.did.status).toBe('active');
  });

  it('a wrong code spends an attempt (recorded); the fifth burns the code, and even the right one fails after it', async () => {
    const e164 = nextNumber();
    const did = (await post(a, { e164 })).body.did;
    const [code] = platform.codesTo(e164);
    const wrong = wrongCodeFor(code!);
    for (let left = 4; left >= 1; left -= 1) {
      expectError(await verify(a, did.id, wrong), 422, 'unprocessable', new RegExp(`${left} attempt`));
      expect((await get(a, did.id)).body.did.verification).toMatchObject({ status: 'pending', attempts_left: left });
    }
    expectError(await verify(a, did.id, 'not-a-code'), 422, 'unprocessable', /no attempt is left/);
    expect((await get(a, did.id)).body.did).toMatchObject({ status: 'quarantine', verification: { status: 'failed', expires_at: null, attempts_left: null } });
    expectError(await verify(a, did.id, code), 422, 'unprocessable', /no code is pending/);
    expect((await get(a, did.id)).body.did.status).toBe('quarantine');
    const actions = (await audits(a, did.id)).map((e) => e.action);
    expect(actions.filter((x) => x === 'did.verification_failed')).toHaveLength(5);
    expect(actions).not.toContain('did.verified');
  });

  it('an expired code is refused; a new code (after the resend spacing) replaces it and works', async () => {
    const e164 = nextNumber();
    const did = (await post(a, { e164 })).body.did;
    const [first] = platform.codesTo(e164);
    moveClock(VERIFICATION_TTL_MS + 1000);
    expect((await get(a, did.id)).body.did.verification).toMatchObject({ status: 'expired', attempts_left: null });
    expectError(await verify(a, did.id, first), 422, 'unprocessable', /expired/);
    expect((await get(a, did.id)).body.did.status).toBe('quarantine');

    const again = await resend(a, did.id);
    expect(again.status).toBe(200);
    expect(again.body.did.verification).toMatchObject({ status: 'pending', attempts_left: 5 });
    const codes = platform.codesTo(e164);
    expect(codes).toHaveLength(2);
    // Spaced: a third code right away is 429 and nothing is texted.
    expectError(await resend(a, did.id), 429, 'rate_limited');
    expect(platform.codesTo(e164)).toHaveLength(2);
    if (codes[1] !== first) expectError(await verify(a, did.id, first), 422, 'unprocessable', /wrong/);
    expect((await verify(a, did.id, codes[1])).body.did.status).toBe('active');
  });

  it('a code the provider refuses leaves the verification undelivered; nothing can be confirmed until a new code goes out', async () => {
    platform.state.refuse = true;
    const e164 = nextNumber();
    const res = await post(a, { e164 });
    expect(res.status).toBe(201);
    expect(res.body.did).toMatchObject({ status: 'quarantine', verification: { status: 'undelivered', expires_at: null } });
    expect((await audits(a, res.body.did.id)).map((e) => e.action)).toEqual(['did.created', 'did.verification_sent', 'did.verification_undelivered']);
    expectError(await verify(a, res.body.did.id, '000000'), 422, 'unprocessable', /no code is pending/);
  });

  it('house and active DIDs take no code; registering as quarantine or retired texts nothing', async () => {
    const house = (await provisionHouse(a, [nextNumber()])).body.dids[0];
    expect(house.verification).toBeNull();
    expectError(await resend(a, house.id), 422, 'unprocessable', /house/);
    const active = await claimDid(app, platform, a.apiKey, nextNumber());
    expectError(await resend(a, active.id), 422, 'unprocessable', /already proven/);
    const sent = platform.received.length;
    for (const status of ['quarantine', 'retired']) {
      const res = await post(a, { e164: nextNumber(), status });
      expect(res.body.did).toMatchObject({ status, verification: null });
    }
    expect(platform.received.length).toBe(sent);
  });

  it('retiring a customer DID lets the number go: active again needs a new code', async () => {
    const did = await claimDid(app, platform, a.apiKey, nextNumber());
    expect((await app.request('DELETE', `/v1/dids/${did.id}`, { token: a.apiKey })).body.did).toMatchObject({ status: 'retired', verification: null });
    expectError(await patch(a, did.id, { status: 'active' }), 422, 'unprocessable');
    expectError(await resend(a, did.id), 429, 'rate_limited');
    moveClock(VERIFICATION_RESEND_COOLDOWN_MS + 1000);
    expect((await resend(a, did.id)).body.did.verification.status).toBe('pending');
    const code = platform.codesTo(did.e164).at(-1);
    expect((await verify(a, did.id, code)).body.did.status).toBe('active');
  });

  it('400 for a missing or non-string code; 404 for a foreign DID, whose code is untouched', async () => {
    const e164 = nextNumber();
    const did = (await post(a, { e164 })).body.did;
    expectError(await app.request('POST', `/v1/dids/${did.id}/verify`, { token: a.apiKey, body: {} }), 400, 'bad_request', /code/);
    expectError(await verify(a, did.id, 123456), 400, 'bad_request', /code/);
    expectError(await verify(b, did.id, platform.codesTo(e164)[0]), 404, 'not_found');
    expectError(await resend(b, did.id), 404, 'not_found');
    expect((await get(a, did.id)).body.did.verification).toMatchObject({ status: 'pending', attempts_left: 5 });
  });
});
