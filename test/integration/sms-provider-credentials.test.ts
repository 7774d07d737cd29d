import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { withTenant } from '../../src/lib/tenancy';
import { resolvedProviderOf } from '../../src/modules/sms-providers/sms-provider.resolve';
import { daytimePrefix, numberEnding } from '../helpers/dial-loop';
import { createUserSession, provisionTenant, startTestApp, type HttpResult, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(120_000);

/**
 * Issue 17, provider credentials. The deployment's provider is the http adapter at a loopback
 * receiver standing for the platform's SMS account (SMS_PROVIDER_API_KEY). A tenant registers its
 * own http provider at another loopback receiver (both origins are in EGRESS_ALLOWLIST, as a
 * public host would pass the egress check) and texts through it: before the fix that receiver saw
 * `Authorization: Bearer <platform key>` on every send, so any tenant could collect the key that
 * reads and sends every tenant's texts.
 */

const PLATFORM_KEY = `platform-sms-key-${randomUUID()}`;
const HMAC_SECRET = 'tenant-webhook-hmac-secret';

interface Seen {
  url: string;
  authorization: string | undefined;
  raw: string;
}

/** A loopback SMS provider speaking the http protocol: accepts every message, records what it saw. */
async function receiver() {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization, raw: JSON.stringify({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }) });
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `prov-${randomUUID()}` }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, seen, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

type Receiver = Awaited<ReturnType<typeof receiver>>;

let app: TestApp;
let owner: Client;
let platform: Receiver;
let attacker: Receiver;
let prefix: string;
let serial = 0;

beforeAll(async () => {
  [platform, attacker] = await Promise.all([receiver(), receiver()]);
  app = await startTestApp({
    EGRESS_ALLOWLIST: `${platform.origin},${attacker.origin}`,
    SMS_PROVIDER_ADAPTER: 'http',
    SMS_PROVIDER_BASE_URL: `${platform.origin}/platform`,
    SMS_PROVIDER_API_KEY: PLATFORM_KEY,
  });
  owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await owner.connect();
  prefix = daytimePrefix();
});
afterAll(async () => {
  await owner?.end();
  await app?.close();
  await Promise.all([platform?.close(), attacker?.close()]);
});
beforeEach(() => {
  platform.seen.length = 0;
  attacker.seen.length = 0;
});

const expectStatus = (res: HttpResult, status: number) => expect({ status: res.status, body: res.status === status ? null : res.body }).toEqual({ status, body: null });

async function createProvider(token: string, body: Record<string, unknown>) {
  const res = await app.request('POST', '/v1/sms/providers', { token, body: { adapter: 'http', region: 'us', name: `p-${randomUUID().slice(0, 6)}`, ...body } });
  expectStatus(res, 201);
  return res;
}

/** A debt imported through the API (an import carries SMS consent, CONTRACT section 5) and a daytime number. */
async function importDebt(t: ProvisionedTenant): Promise<{ debtId: string; phone: string }> {
  const ref = `cred-${randomUUID()}`;
  const phone = numberEnding(prefix, (serial += 1), 10 + (serial % 40));
  const res = await app.request('POST', '/v1/debts/import', {
    token: t.apiKey,
    body: { debts: [{ external_ref: ref, consumer_ref: `c-${ref}`, amount_cents: 10_000, currency: 'USD', contacts: [{ phone_e164: phone, is_primary: true }] }] },
  });
  expect({ status: res.status, failed: res.body?.failed }).toEqual({ status: 200, failed: [] });
  const found = await app.request('GET', `/v1/debts?external_ref=${encodeURIComponent(ref)}`, { token: t.apiKey });
  return { debtId: found.body.debts[0].id, phone };
}

async function text(t: ProvisionedTenant): Promise<HttpResult> {
  const { debtId, phone } = await importDebt(t);
  const res = await app.request('POST', '/v1/sms/messages', { token: t.apiKey, body: { to: phone, body: 'Your balance. Reply STOP to opt out', debt_id: debtId } });
  expect({ status: res.status, message_status: res.body?.sms_message?.status, error: res.body?.error }).toEqual({ status: 202, message_status: 'sent', error: undefined });
  return res;
}

describe('a tenant-supplied base_url never receives the deployment key', () => {
  it('the attack: a tenant points its own http provider at a receiver it controls and texts; the receiver never sees the platform key', async () => {
    const t = await provisionTenant(app);
    await createProvider(t.apiKey, { base_url: `${attacker.origin}/collect` });

    await text(t);

    expect(attacker.seen.map((s) => s.url)).toEqual(['/collect/messages']);
    expect(attacker.seen[0]!.authorization).toBeUndefined();
    expect(attacker.seen[0]!.raw).not.toContain(PLATFORM_KEY);
    expect(platform.seen).toEqual([]);
  });
});

describe('a provider\'s own api_key', () => {
  it('is what a tenant endpoint receives; write-only (has_api_key), stored encrypted, out of the audit, removed by null', async () => {
    const t = await provisionTenant(app);
    const created = await createProvider(t.apiKey, { base_url: `${attacker.origin}/own` });
    const id = created.body.sms_provider.id as string;
    expect(created.body.sms_provider.has_api_key).toBe(false);
    const OWN = `tenant-own-${randomUUID()}`;

    const patched = await app.request('PATCH', `/v1/sms/providers/${id}`, { token: t.apiKey, body: { api_key: OWN } });
    expectStatus(patched, 200);
    expect(patched.body.sms_provider).toMatchObject({ has_api_key: true, has_secret: false });
    const sent = await text(t);
    expect(attacker.seen.map((s) => [s.url, s.authorization])).toEqual([['/own/messages', `Bearer ${OWN}`]]);
    expect(attacker.seen[0]!.raw).not.toContain(PLATFORM_KEY);

    const stored = await withTenant(app.deps.db, t.tenantId, (tx) => tx.smsProvider.findUniqueOrThrow({ where: { id } }));
    expect(stored.apiKeyCiphertext).not.toBeNull();
    expect(stored.apiKeyCiphertext).not.toContain(OWN);
    expect(resolvedProviderOf(app.deps, { id, adapter: 'http', region: 'us', base_url: stored.baseUrl, api_key_ciphertext: stored.apiKeyCiphertext }).credential).toEqual({ kind: 'own', apiKey: OWN });

    const got = await app.request('GET', `/v1/sms/providers/${id}`, { token: t.apiKey });
    expect(got.body.sms_provider.has_api_key).toBe(true);
    const listed = await app.request('GET', '/v1/sms/providers', { token: t.apiKey });
    for (const res of [patched, got, listed, sent]) expect(res.text).not.toContain(OWN);
    const audit = await withTenant(app.deps.db, t.tenantId, (tx) => tx.auditLog.findMany({ where: { subjectType: 'sms_provider', subjectId: id }, orderBy: { seq: 'asc' } }));
    expect(audit.map((e) => [e.action, (e.payload as Record<string, unknown>).api_key ?? (e.payload as Record<string, unknown>).has_api_key])).toEqual([
      ['sms_provider.created', false],
      ['sms_provider.updated', 'set'],
    ]);
    expect(JSON.stringify(audit, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(OWN);

    const removed = await app.request('PATCH', `/v1/sms/providers/${id}`, { token: t.apiKey, body: { api_key: null } });
    expect(removed.body.sms_provider.has_api_key).toBe(false);
    attacker.seen.length = 0;
    await text(t);
    expect(attacker.seen.map((s) => s.authorization)).toEqual([undefined]);
  });

  it('is set at creation, and refused when empty or not a header-safe token', async () => {
    const t = await provisionTenant(app);
    const OWN = `created-with-${randomUUID()}`;
    const created = await createProvider(t.apiKey, { base_url: attacker.origin, api_key: OWN });
    expect(created.body.sms_provider.has_api_key).toBe(true);
    expect(created.text).not.toContain(OWN);
    for (const bad of ['', 'two words', 'line\nbreak', 'x'.repeat(4097)]) {
      for (const res of [
        await app.request('POST', '/v1/sms/providers', { token: t.apiKey, body: { adapter: 'http', region: 'us', name: 'x', api_key: bad } }),
        await app.request('PATCH', `/v1/sms/providers/${created.body.sms_provider.id}`, { token: t.apiKey, body: { api_key: bad } }),
      ]) {
        expect({ status: res.status, code: res.body?.error?.code, message: res.body?.error?.message }).toMatchObject({ status: 400, code: 'invalid', message: expect.stringMatching(/api_key/) });
      }
    }
    await text(t);
    expect(attacker.seen.map((s) => s.authorization)).toEqual([`Bearer ${OWN}`]);
  });

  it('is never moved to a new endpoint: a base_url or adapter change on a keyed provider must carry api_key', async () => {
    const t = await provisionTenant(app);
    const created = await createProvider(t.apiKey, { base_url: `${platform.origin}/real-provider`, api_key: 'key-for-the-real-provider' });
    const id = created.body.sms_provider.id as string;
    const move = (body: Record<string, unknown>) => app.request('PATCH', `/v1/sms/providers/${id}`, { token: t.apiKey, body });
    for (const res of [await move({ base_url: `${attacker.origin}/steal` }), await move({ adapter: 'carrier_a' })]) {
      expect({ status: res.status, code: res.body?.error?.code, message: res.body?.error?.message }).toMatchObject({ status: 400, code: 'invalid', message: expect.stringMatching(/api_key/) });
    }
    // Same base_url again is no move; a move with the key (or null) is the caller vouching for the new endpoint.
    expectStatus(await move({ base_url: `${platform.origin}/real-provider`, name: 'Renamed' }), 200);
    const moved = await move({ base_url: `${attacker.origin}/new`, api_key: null });
    expect(moved.body.sms_provider).toMatchObject({ base_url: `${attacker.origin}/new`, has_api_key: false });
    await text(t);
    expect(attacker.seen.map((s) => [s.url, s.authorization])).toEqual([['/new/messages', undefined]]);
    expect(platform.seen).toEqual([]);
  });
});

describe('the deployment key goes only to the deployment endpoint', () => {
  it('a tenant without a provider, and a provider with a blank base_url, send to the deployment endpoint with the deployment key', async () => {
    const bare = await provisionTenant(app);
    await text(bare);
    const blank = await provisionTenant(app);
    await createProvider(blank.apiKey, { base_url: '' });
    await text(blank);
    expect(platform.seen.map((s) => [s.url, s.authorization])).toEqual([
      ['/platform/messages', `Bearer ${PLATFORM_KEY}`],
      ['/platform/messages', `Bearer ${PLATFORM_KEY}`],
    ]);
    expect(attacker.seen).toEqual([]);
  });

  it('an account-wide (empresa) provider with its own base_url presents its own key, or none, to every tenant of the account', async () => {
    const a = await provisionTenant(app);
    const sibling = await provisionTenant(app);
    await owner.query('UPDATE tenants SET account_id = (SELECT account_id FROM tenants WHERE id = $1) WHERE id = $2', [a.tenantId, sibling.tenantId]);
    const admin = (await createUserSession(app, a)).token;
    const ACCOUNT_KEY = `account-key-${randomUUID()}`;
    const wide = await createProvider(admin, { scope: 'empresa', base_url: `${attacker.origin}/account`, api_key: ACCOUNT_KEY });
    await text(sibling);
    await app.request('PATCH', `/v1/sms/providers/${wide.body.sms_provider.id}`, { token: admin, body: { api_key: null } });
    await text(a);
    expect(attacker.seen.map((s) => [s.url, s.authorization])).toEqual([
      ['/account/messages', `Bearer ${ACCOUNT_KEY}`],
      ['/account/messages', undefined],
    ]);
    expect(attacker.seen.map((s) => s.raw).join()).not.toContain(PLATFORM_KEY);
    expect(platform.seen).toEqual([]);
  });
});

describe('keyword replies present the same credential as sends', () => {
  const OUR_NUMBER = '+13035550100';
  const inbound = (providerId: string, from: string, text_: string) => {
    const raw = JSON.stringify({ message_id: `in-${randomUUID()}`, from, to: OUR_NUMBER, text: text_, timestamp: new Date().toISOString() });
    const signature = createHmac('sha256', HMAC_SECRET).update(raw).digest('hex');
    return app.request('POST', `/webhooks/sms/${providerId}/inbound`, { rawBody: raw, headers: { 'content-type': 'application/json', 'x-dd-signature': signature } });
  };

  it('the STOP confirmation and the HELP reply go to the tenant provider with its own key, never the platform key', async () => {
    const t = await provisionTenant(app);
    const OWN = `tenant-reply-key-${randomUUID()}`;
    const p = await createProvider(t.apiKey, { base_url: `${attacker.origin}/replies`, webhook_secret: HMAC_SECRET, api_key: OWN });
    const id = p.body.sms_provider.id as string;
    const consumer = numberEnding(prefix, (serial += 1), 20);

    expect((await inbound(id, consumer, 'HELP')).body).toEqual({ status: 'ok' });
    expect((await inbound(id, consumer, 'STOP')).body).toEqual({ status: 'ok' });
    await app.request('PATCH', `/v1/sms/providers/${id}`, { token: t.apiKey, body: { api_key: null } });
    expect((await inbound(id, numberEnding(prefix, (serial += 1), 20), 'STOP')).body).toEqual({ status: 'ok' });

    expect(attacker.seen.map((s) => [s.url, s.authorization])).toEqual([
      ['/replies/messages', `Bearer ${OWN}`],
      ['/replies/messages', `Bearer ${OWN}`],
      ['/replies/messages', undefined],
    ]);
    expect(attacker.seen.map((s) => s.raw).join()).not.toContain(PLATFORM_KEY);
    expect(platform.seen).toEqual([]);
  });

  it('a keyword to a provider with a blank base_url is answered at the deployment endpoint with the deployment key', async () => {
    const t = await provisionTenant(app);
    const p = await createProvider(t.apiKey, { base_url: null, webhook_secret: HMAC_SECRET });
    expect((await inbound(p.body.sms_provider.id, numberEnding(prefix, (serial += 1), 20), 'STOP')).body).toEqual({ status: 'ok' });
    expect(platform.seen.map((s) => [s.url, s.authorization])).toEqual([['/platform/messages', `Bearer ${PLATFORM_KEY}`]]);
    expect(attacker.seen).toEqual([]);
  });
});

describe('OpenAPI', () => {
  it('documents api_key as write-only in both bodies and has_api_key in the view', async () => {
    const doc = (await app.request('GET', '/v1/openapi.json')).body;
    const schemas = doc.components.schemas;
    expect(schemas.SmsProvider.properties.has_api_key).toMatchObject({ type: 'boolean' });
    expect(schemas.SmsProvider.required).toContain('has_api_key');
    expect(schemas.SmsProvider.properties.api_key).toBeUndefined();
    for (const body of ['CreateSmsProvider', 'PatchSmsProvider']) expect(schemas[body].properties.api_key.description).toMatch(/Write-only/);
    expect(doc.paths['/v1/sms/providers'].post.description).toMatch(/never sent to a `base_url` a tenant\s+gave/);
  });
});
