import { createHmac, randomUUID } from 'node:crypto';
import { withTenant } from '../../src/lib/tenancy';
import { ADMIN_TOKEN, provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';
import { startPlatformSms, type PlatformSms } from '../helpers/platform-sms';

jest.setTimeout(120_000);

/**
 * Issue 17, SMS sender identity through keyword replies. A tenant sets its own provider's webhook
 * secret, so it can sign an inbound naming any number as `to`. Before the fix the STOP or HELP
 * reply went out `from` that number: a tenant could text as another collector's active DID, through
 * the deployment's own account when its provider is the deployment endpoint (blank base_url). Now
 * a reply comes from the keyword's `to` only when that is an active DID of the tenant.
 */

const SECRET = 'keyword-reply-webhook-secret';

let app: TestApp;
let platform: PlatformSms;
let victim: ProvisionedTenant;
let attacker: ProvisionedTenant;
let serial = 0;
const number = () => `+1720555${String(1000 + (serial += 1) * 7).slice(-4)}`;

beforeAll(async () => {
  platform = await startPlatformSms();
  app = await startTestApp(platform.env());
  [victim, attacker] = await Promise.all([provisionTenant(app), provisionTenant(app)]);
});
afterAll(async () => {
  await app?.close();
  await platform?.close();
});

const house = async (t: ProvisionedTenant, e164: string) =>
  expect((await app.request('POST', `/v1/admin/tenants/${t.tenantId}/dids`, { token: ADMIN_TOKEN, body: { e164s: [e164] } })).status).toBe(201);

/** A provider at the deployment endpoint (blank base_url: the deployment's key) with a webhook secret the tenant chose. */
async function deploymentProvider(t: ProvisionedTenant): Promise<string> {
  const res = await app.request('POST', '/v1/sms/providers', { token: t.apiKey, body: { adapter: 'http', region: 'us', name: `p-${randomUUID().slice(0, 6)}`, webhook_secret: SECRET } });
  expect(res.status).toBe(201);
  return res.body.sms_provider.id as string;
}

function signedInbound(providerId: string, from: string, to: string, text: string) {
  const raw = JSON.stringify({ message_id: `in-${randomUUID()}`, from, to, text, timestamp: new Date().toISOString() });
  const signature = createHmac('sha256', SECRET).update(raw).digest('hex');
  return app.request('POST', `/webhooks/sms/${providerId}/inbound`, { rawBody: raw, headers: { 'content-type': 'application/json', 'x-dd-signature': signature } });
}

const replyRows = (t: ProvisionedTenant, to: string) =>
  withTenant(app.deps.db, t.tenantId, (tx) => tx.smsMessage.findMany({ where: { direction: 'outbound', toE164: to, correctsId: null }, orderBy: { recordedAt: 'asc' } }));

describe('keyword replies text only from the tenant\'s own active DIDs', () => {
  it('the attack: a signed inbound naming another tenant\'s active DID as the number texted gets its HELP and STOP replies from the default sender, never from that DID', async () => {
    const theirs = number();
    await house(victim, theirs);
    const providerId = await deploymentProvider(attacker);
    const target = number();

    for (const keyword of ['HELP', 'STOP']) expect((await signedInbound(providerId, target, theirs, keyword)).body).toEqual({ status: 'ok' });

    const sent = platform.received.filter((r) => r.to === target);
    expect(sent.map((r) => [r.from, r.authorization])).toEqual([
      [null, `Bearer ${platform.apiKey}`],
      [null, `Bearer ${platform.apiKey}`],
    ]);
    expect((await replyRows(attacker, target)).map((r) => [r.kind, r.fromE164])).toEqual([
      ['help_reply', null],
      ['stop_confirmation', null],
    ]);
  });

  it('a number that is nobody\'s DID, or the tenant\'s own DID parked in quarantine, is no sender either', async () => {
    const parked = number();
    expect((await app.request('POST', '/v1/dids', { token: attacker.apiKey, body: { e164: parked, status: 'quarantine' } })).status).toBe(201);
    const providerId = await deploymentProvider(attacker);
    const target = number();
    expect((await signedInbound(providerId, target, number(), 'HELP')).body).toEqual({ status: 'ok' });
    expect((await signedInbound(providerId, target, parked, 'AYUDA')).body).toEqual({ status: 'ok' });
    expect(platform.received.filter((r) => r.to === target).map((r) => r.from)).toEqual([null, null]);
  });

  it('a keyword sent to the tenant\'s own active DID is answered from that DID', async () => {
    const mine = number();
    await house(attacker, mine);
    const providerId = await deploymentProvider(attacker);
    const target = number();
    expect((await signedInbound(providerId, target, mine, 'STOP')).body).toEqual({ status: 'ok' });
    expect(platform.received.filter((r) => r.to === target).map((r) => r.from)).toEqual([mine]);
    expect((await replyRows(attacker, target)).map((r) => [r.kind, r.fromE164, r.status])).toEqual([['stop_confirmation', mine, 'queued']]);
  });
});
