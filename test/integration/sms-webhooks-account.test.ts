import { createHmac, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withTenant } from '../../src/lib/tenancy';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(60_000);

/**
 * Inbound texts to an account-wide provider (tenant_id null): the tenant is the one of the
 * provider's account that last texted the number through that provider (sms_inbound_tenant).
 */
const SECRET = 'account-wide-hmac-secret';
const OUR_NUMBER = '+13035550100';
// The mock provider refuses numbers ending in 99, and the STOP confirmation goes through it.
/** A fresh customer number per call (a shared tenant must not see another test's number); never ending in 9, so never 99. */
let customerSerial = Math.floor(Math.random() * 400);
const CUSTOMER = () => {
  customerSerial += 1;
  return `+1303555${String(1000 + Math.floor(customerSerial / 9) * 10 + (customerSerial % 9)).slice(-4)}`;
};

let app: TestApp;
let owner: Client;
/** A and B share one account; C is of another account. */
let a: ProvisionedTenant;
let b: ProvisionedTenant;
let c: ProvisionedTenant;
let wideId: string;

beforeAll(async () => {
  app = await startTestApp();
  owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await owner.connect();
  [a, b, c] = await Promise.all([provisionTenant(app), provisionTenant(app), provisionTenant(app)]);
  // The operator API gives every tenant its own account; sites (sedes) of one company share one.
  await owner.query('UPDATE tenants SET account_id = (SELECT account_id FROM tenants WHERE id = $1) WHERE id = $2', [a.tenantId, b.tenantId]);
  const { rows } = await owner.query<{ id: string }>(
    `INSERT INTO sms_providers (account_id, tenant_id, adapter, region, name, webhook_secret_ciphertext)
     SELECT account_id, NULL, 'mock', 'us', 'account-wide', $2 FROM tenants WHERE id = $1 RETURNING id`,
    [a.tenantId, app.deps.box.encrypt(SECRET)],
  );
  wideId = rows[0]!.id;
});

afterAll(async () => {
  await owner?.end();
  await app?.close();
});

/** An outbound original (and its sent transition) through `providerId`, `minutesAgo` in the past; written as the owner. */
async function outbound(tenant: ProvisionedTenant, to: string, minutesAgo: number, providerId = wideId) {
  const at = new Date(Date.now() - minutesAgo * 60_000);
  const { rows } = await owner.query<{ id: string }>(
    `INSERT INTO sms_messages (tenant_id, direction, status, from_e164, to_e164, body, client_ref, provider_id, occurred_at)
     VALUES ($1, 'outbound', 'queued', $2, $3, 'Your balance', $4, $5, $6) RETURNING id`,
    [tenant.tenantId, OUR_NUMBER, to, randomUUID(), providerId, at],
  );
  await owner.query(
    `INSERT INTO sms_messages (tenant_id, direction, status, to_e164, provider_id, provider_message_id, corrects_id, occurred_at)
     VALUES ($1, 'outbound', 'sent', $2, $3, $4, $5, $6)`,
    [tenant.tenantId, to, providerId, `mock-${randomUUID()}`, rows[0]!.id, at],
  );
}

async function debtWithConsent(tenant: ProvisionedTenant, phone: string) {
  return withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const debt = await tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef: randomUUID(), consumerRef: `c-${randomUUID().slice(0, 8)}` } });
    await tx.consent.create({ data: { tenantId: tenant.tenantId, debtId: debt.id, phoneE164: phone, channel: 'sms', source: 'import' } });
    return debt;
  });
}

const state = (tenant: ProvisionedTenant, phone: string) =>
  withTenant(app.deps.db, tenant.tenantId, async (tx) => ({
    dnc: await tx.dncEntry.findMany({ where: { phoneE164: phone } }),
    consents: await tx.consent.findMany({ where: { phoneE164: phone } }),
    inbound: await tx.smsMessage.findMany({ where: { direction: 'inbound', fromE164: phone } }),
    replies: await tx.smsMessage.findMany({ where: { direction: 'outbound', toE164: phone, kind: { not: null } } }),
  }));

function inbound(from: string, text: string) {
  const raw = JSON.stringify({ message_id: `in-${randomUUID()}`, from, to: OUR_NUMBER, text, timestamp: new Date().toISOString() });
  return app.request('POST', `/webhooks/sms/${wideId}/inbound`, {
    rawBody: raw,
    headers: { 'content-type': 'application/json', 'x-dd-signature': createHmac('sha256', SECRET).update(raw).digest('hex') },
  });
}

describe('inbound SMS to an account-wide provider', () => {
  it('a STOP lists the number and revokes consent in the tenant that last texted it, not in the other tenant of the account', async () => {
    const phone = CUSTOMER();
    await debtWithConsent(a, phone);
    await debtWithConsent(b, phone);
    // B texted the number earlier; A is the latest of the account. C (another account) texted it
    // last of all through the same provider id, and must not be considered.
    await outbound(b, phone, 30);
    await outbound(a, phone, 10);
    await outbound(c, phone, 1);

    const res = await inbound(phone, 'STOP');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });

    const inA = await state(a, phone);
    expect(inA.inbound).toHaveLength(1);
    expect(inA.inbound[0]).toMatchObject({ providerId: wideId, status: 'received', body: 'STOP' });
    expect(inA.dnc).toHaveLength(1);
    expect(inA.dnc[0]).toMatchObject({ source: 'optout_keyword' });
    expect(inA.consents).toHaveLength(1);
    expect(inA.consents[0]!.revokedAt).not.toBeNull();
    // The confirmation goes back through the provider the STOP came in by, as the tenant's row.
    expect(inA.replies.map((r) => ({ kind: r.kind, providerId: r.providerId }))).toEqual([{ kind: 'stop_confirmation', providerId: wideId }]);

    for (const other of [b, c]) {
      const s = await state(other, phone);
      expect(s.inbound).toEqual([]);
      expect(s.dnc).toEqual([]);
      expect(s.replies).toEqual([]);
    }
    expect((await state(b, phone)).consents.map((k) => k.revokedAt)).toEqual([null]);
  });

  it('a text answers the latest conversation of the account: B after B texted last', async () => {
    const phone = CUSTOMER();
    await outbound(a, phone, 20);
    await outbound(b, phone, 5);
    expect((await inbound(phone, 'I will pay on Friday')).body).toEqual({ status: 'ok' });
    expect((await state(b, phone)).inbound.map((m) => m.body)).toEqual(['I will pay on Friday']);
    expect((await state(a, phone)).inbound).toEqual([]);
  });

  it('ignores an inbound from a number no tenant of the account texted through the provider', async () => {
    const phone = CUSTOMER();
    // Texted only by another account through that provider id, and by A through another provider.
    await outbound(c, phone, 1);
    const { rows } = await owner.query<{ id: string }>(
      `INSERT INTO sms_providers (account_id, tenant_id, adapter, region, name) SELECT account_id, id, 'mock', 'us', 'own' FROM tenants WHERE id = $1 RETURNING id`,
      [a.tenantId],
    );
    await outbound(a, phone, 1, rows[0]!.id);

    expect((await inbound(phone, 'STOP')).body).toEqual({ status: 'ignored' });
    expect((await inbound(CUSTOMER(), 'hello')).body).toEqual({ status: 'ignored' });
    for (const t of [a, b, c]) {
      const s = await state(t, phone);
      expect(s.inbound).toEqual([]);
      expect(s.dnc).toEqual([]);
    }
  });
});
